#include "pb.h"

uint8_t *gt_pb_close_long(uint8_t *len_at, uint8_t *end)
{
    size_t n = (size_t)(end - len_at - 1);
    size_t extra = gt_pb_varint_size(n) - 1;
    memmove(len_at + 1 + extra, len_at + 1, n);
    gt_pb_varint(len_at, n);
    return end + extra;
}
