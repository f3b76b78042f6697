/* A bounded reader of the DWARF debug information's entries (dwarf_info.c):
 * units of versions 2 to 5, 32- and 64-bit, as GCC, Clang and nvcc's host
 * compiler write them with -g; their abbreviations; the attributes that
 * name functions, say where code was inlined and describe calls; a walk
 * through a function's entries; and the strings, addresses and address
 * ranges those refer to in the other debug sections. Every read stays
 * within its section. */
#ifndef GT_DWARF_INFO_H
#define GT_DWARF_INFO_H

#include <stddef.h>
#include <stdint.h>

#include "dwarf_reader.h"
#include "elf_file.h"

/* The tags call sites look for. */
enum {
    GT_DW_TAG_LEXICAL_BLOCK = 0x0b,
    GT_DW_TAG_INLINED_SUBROUTINE = 0x1d,
    GT_DW_TAG_CATCH_BLOCK = 0x25,
    GT_DW_TAG_SUBPROGRAM = 0x2e,
    GT_DW_TAG_TRY_BLOCK = 0x32,
    GT_DW_TAG_CALL_SITE = 0x48,
    GT_DW_TAG_GNU_CALL_SITE = 0x4109, /* DWARF 4's extension: GCC's -gdwarf-4 */
};

/* An abbreviation: an entry's tag, and its attributes' forms. */
typedef struct gt_dwarf_abbrev {
    uint64_t code, tag;
    int children;
    const uint8_t *specs; /* (attribute, form[, constant]) up to (0, 0), in .debug_abbrev */
} gt_dwarf_abbrev;

#define GT_DWARF_NONE UINT64_MAX /* a base the unit does not give */

/* A compile or partial unit of .debug_info. */
typedef struct gt_dwarf_unit {
    size_t start, die, end; /* offsets in .debug_info: header, first entry, end */
    size_t abbrevs_at;      /* offset in .debug_abbrev */
    uint64_t low_pc;        /* the base of its range lists */
    uint64_t addr_base, str_offsets_base, rnglists_base; /* GT_DWARF_NONE when not given */
    uint64_t lines;                                      /* its line table, in .debug_line */
    uint8_t version, addr_size, offset8;
    gt_dwarf_abbrev *abbrevs; /* by code, once read (gt_dwarf_abbrevs_read) */
    size_t nabbrevs;
} gt_dwarf_unit;

/* An attribute's value as read: a constant, an address (or .debug_addr
 * index), an offset, an index, or a reference (made absolute: an offset
 * in .debug_info). */
typedef struct gt_dwarf_value {
    uint64_t form, u;
    const char *s; /* DW_FORM_string's */
} gt_dwarf_value;

/* The attributes read, each with a bit in gt_dwarf_entry.have. */
enum gt_dwarf_slot {
    GT_DW_SIBLING,
    GT_DW_NAME,
    GT_DW_LINKAGE_NAME, /* DW_AT_linkage_name, DW_AT_MIPS_linkage_name */
    GT_DW_LOW_PC,
    GT_DW_HIGH_PC,
    GT_DW_RANGES,
    GT_DW_ABSTRACT_ORIGIN,
    GT_DW_SPECIFICATION,
    GT_DW_CALL_FILE,
    GT_DW_CALL_LINE,
    GT_DW_STMT_LIST,
    GT_DW_STR_OFFSETS_BASE,
    GT_DW_ADDR_BASE,
    GT_DW_RNGLISTS_BASE,
    GT_DW_CALL_ORIGIN,    /* DW_AT_call_origin (a GNU call site's is its abstract origin) */
    GT_DW_CALL_RETURN_PC, /* DW_AT_call_return_pc (a GNU call site's is its low PC) */
    GT_DW_CALL_PC,        /* DW_AT_call_pc: a tail call's own address (Clang writes it) */
    GT_DW_CALL_TAIL,      /* DW_AT_call_tail_call, DW_AT_GNU_tail_call */
    GT_DW_SLOTS
};

typedef struct gt_dwarf_entry {
    const gt_dwarf_abbrev *ab; /* NULL: a null entry, which ends a list of children */
    unsigned have;
    gt_dwarf_value v[GT_DW_SLOTS];
} gt_dwarf_entry;

static inline int gt_dwarf_has(const gt_dwarf_entry *d, enum gt_dwarf_slot slot)
{
    return (d->have >> slot) & 1u;
}

/* The unit whose header is at `at` in .debug_info, and its own entry into
 * d (its abbreviation into ab): 0, or -1 when it is not a compile or
 * partial unit this reader can read. *next is where the next unit
 * starts: not past `at` when that cannot be known. */
int gt_dwarf_unit_read(const gt_elf *e, size_t at, gt_dwarf_unit *u, gt_dwarf_abbrev *ab,
                       gt_dwarf_entry *d, size_t *next);

/* Reads the unit's abbreviations, once (gt_dwarf_unit_free frees them):
 * 0, or -1. */
int gt_dwarf_abbrevs_read(const gt_elf *e, gt_dwarf_unit *u);

void gt_dwarf_unit_free(gt_dwarf_unit *u);

/* The entry at r, in a unit whose abbreviations are read: 0 (r after it),
 * or -1 when it cannot be read. */
int gt_dwarf_entry_read(const gt_elf *e, const gt_dwarf_unit *u, gt_dwarf_reader *r,
                        gt_dwarf_entry *d);

/* Whether a reference can be followed: into .debug_info, not into a type
 * unit or a supplementary file. */
int gt_dwarf_is_ref(const gt_dwarf_value *v);

/* Moves r past the entry's children to its next sibling, when the entry
 * says where that is (forward, within the unit): 1, else 0. */
int gt_dwarf_to_sibling(const gt_elf *e, const gt_dwarf_unit *u, gt_dwarf_reader *r,
                        const gt_dwarf_entry *d);

/* A string value; "" when it cannot be had. */
const char *gt_dwarf_string(const gt_elf *e, const gt_dwarf_unit *u, const gt_dwarf_value *v);

/* Calls fn for each address range [lo, hi) of an entry (its low and high
 * PC, or its range list), until fn returns non-zero, which is returned; 0
 * when none stopped it, -1 when the entry gives no addresses. Ranges at
 * address 0 (code the linker dropped) are passed over. */
typedef int (*gt_dwarf_range_fn)(uint64_t lo, uint64_t hi, void *ctx);
int gt_dwarf_ranges(const gt_elf *e, const gt_dwarf_unit *u, const gt_dwarf_entry *d,
                    gt_dwarf_range_fn fn, void *ctx);

/* An address value (DW_FORM_addr, or an index into .debug_addr) into
 * *out: 0, or -1. */
int gt_dwarf_address(const gt_elf *e, const gt_dwarf_unit *u, const gt_dwarf_value *v,
                     uint64_t *out);

/* A walk through the entries below one, in order, that reads into the
 * entries it is told to and passes over the others' children. */
typedef struct gt_dwarf_walk {
    gt_dwarf_reader r;
    size_t depth;   /* of the next entry */
    size_t floor;   /* the walk ends when depth comes down to it */
    size_t passing; /* entries this deep or deeper are passed over */
} gt_dwarf_walk;

/* A walk below the entry at `at` (into d): 0, or -1 when it cannot be
 * read. */
int gt_dwarf_walk_start(const gt_elf *e, const gt_dwarf_unit *u, size_t at, gt_dwarf_walk *w,
                        gt_dwarf_entry *d);

/* The next entry not passed over, into d (its offset into *at): 1, or 0
 * at the end or at an entry that cannot be read. */
int gt_dwarf_walk_next(const gt_elf *e, const gt_dwarf_unit *u, gt_dwarf_walk *w, gt_dwarf_entry *d,
                       size_t *at);

/* After gt_dwarf_walk_next: the walk goes into the entry's children (1),
 * or passes over them (0), by its sibling where it says, else by reading
 * them. */
void gt_dwarf_walk_into(const gt_elf *e, const gt_dwarf_unit *u, gt_dwarf_walk *w,
                        const gt_dwarf_entry *d, int into);

#endif
