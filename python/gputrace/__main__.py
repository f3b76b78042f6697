"""python -m gputrace [options] [--] program [args...]: the gputrace command
installed with this module, run in place of the interpreter (same process,
same exit status)."""
import os
import sys

from ._install import command_path


def main():
    command = command_path()
    if command is None:
        sys.stderr.write("gputrace: the gputrace command is not installed with this module "
                         "(reinstall the gputrace wheel)\n")
        return 2
    os.execv(command, [command] + sys.argv[1:])
    return 2  # not reached: execv raises on failure


if __name__ == "__main__":
    sys.exit(main())
