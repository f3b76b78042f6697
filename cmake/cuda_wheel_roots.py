"""Prints the directories where NVIDIA's CUDA 13 wheels installed in this
Python environment keep their headers (<site-packages>/nvidia/cu13), as a
CMake list; nothing when there are none. Used by cuda_root.cmake."""
import importlib.util
import os

spec = importlib.util.find_spec("nvidia")
places = spec.submodule_search_locations if spec else None
print(";".join(os.path.join(d, "cu13") for d in (places or [])))
