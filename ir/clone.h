/* SPDX-License-Identifier: Apache-2.0 */
/* clone.h: deep copies of kernel IR (ir/clone.c), for what must outlive the arena a kernel was made in
 * (the AOT bundle builder keeps the kernels an evaluation ran). */
#ifndef LOOM_IR_CLONE_H
#define LOOM_IR_CLONE_H

#include "ir/ir.h"

/* A copy of k (with its snippet module and user arguments) in arena a; NULL when out of memory. */
KernelIr *ir_kernel_clone(Arena *a, const KernelIr *k);

#endif /* LOOM_IR_CLONE_H */
