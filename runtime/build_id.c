/* SPDX-License-Identifier: Apache-2.0 */
/* build_id.c: which build of Loom this process runs, for the keys of the kernel disk cache.
 *
 * A disk-cache key names Loom's version, but two builds of one version (a developer's tree, a fix in a
 * wheel) may lower a kernel differently; an entry written by one must not be loaded by the other. The
 * linker's GNU build-id note (a hash of the library's contents, ld --build-id, Debian's default) names
 * the build exactly. It is read once from the loaded object holding this function (dl_iterate_phdr);
 * where the object has none, the text is "" and keys fall back to the version alone.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "runtime/runtime.h"

static char build_id[2 * 32 + 1];
static pthread_once_t build_id_once = PTHREAD_ONCE_INIT;

/* The note's descriptor as hex into build_id, when the note is NT_GNU_BUILD_ID. */
static void read_notes(const uint8_t *p, size_t size) {
  while (size >= sizeof(ElfW(Nhdr))) {
    const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)(const void *)p;
    size_t name = (n->n_namesz + 3u) & ~(size_t)3, desc = (n->n_descsz + 3u) & ~(size_t)3;
    size_t all = sizeof *n + name + desc;
    if (all > size) return;
    if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(p + sizeof *n, "GNU", 4) == 0) {
      const uint8_t *id = p + sizeof *n + name;
      size_t len = n->n_descsz < 32 ? n->n_descsz : 32;
      for (size_t i = 0; i < len; i++) snprintf(build_id + 2 * i, 3, "%02x", id[i]);
      return;
    }
    p += all;
    size -= all;
  }
}

static int visit(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  uintptr_t self = (uintptr_t)data;
  bool mine = false;
  for (int i = 0; i < info->dlpi_phnum && !mine; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    mine = ph->p_type == PT_LOAD && self >= lo && self - lo < ph->p_memsz;
  }
  if (!mine) return 0;
  for (int i = 0; i < info->dlpi_phnum && !build_id[0]; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_NOTE) read_notes((const uint8_t *)(info->dlpi_addr + ph->p_vaddr), ph->p_memsz);
  }
  return 1;
}

static void find_build_id(void) { dl_iterate_phdr(visit, (void *)(uintptr_t)&rt_build_id); }

const char *rt_build_id(void) {
  pthread_once(&build_id_once, find_build_id);
  return build_id;
}
