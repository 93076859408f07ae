/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_texture.c: the device side of CUDA's vector types and texture objects for raw CUDA C++ compiled by
 * clang-19 (-nocudainc: no CUDA header is read), the text cuda_raw.c's clang prelude appends.
 *
 * Contract. Vector types: char1..4, uchar, short, ushort, int, uint, long, ulong, longlong, ulonglong, float
 * and double, 1 to 4 components x, y, z, w, with CUDA's alignments (e.g. int4 16, double3 8, short1 2) so a
 * struct holding them has the layout NVRTC gives it (a kernel's by-value struct parameter is its bytes),
 * and make_<type><n>(...). Textures: cudaTextureObject_t / cudaSurfaceObject_t (64-bit handles) and
 * tex1Dfetch<T>(obj, int), tex1D<T>(obj, x), tex2D<T>(obj, x, y), tex3D<T>(obj, x, y, z) (float
 * coordinates), lowered by clang's own __clang_cuda_texture_intrinsics.h to PTX tex.1d / tex.2d / tex.3d
 * (T: a scalar or vector type of 8/16/32-bit ints or float). The host side (CUDA arrays, texture objects)
 * is python/loom/cuda/texture.py. NVRTC has all of these built in, so this is for clang-19 only.
 */
const char rt_cuda_raw_types_prelude[] =
    "/* loom: CUDA vector types and texture fetches (runtime/cuda/cuda_texture.c) */\n"
    "#define LOOM_VEC1(T, N, A) struct __attribute__((aligned(A))) N##1 { T x; }; \\\n"
    "  static __host__ __device__ __forceinline__ N##1 make_##N##1(T x) { N##1 r = {x}; return r; }\n"
    "#define LOOM_VEC2(T, N, A) struct __attribute__((aligned(A))) N##2 { T x, y; }; \\\n"
    "  static __host__ __device__ __forceinline__ N##2 make_##N##2(T x, T y) { N##2 r = {x, y}; return r; }\n"
    "#define LOOM_VEC3(T, N, A) struct __attribute__((aligned(A))) N##3 { T x, y, z; }; \\\n"
    "  static __host__ __device__ __forceinline__ N##3 make_##N##3(T x, T y, T z) { N##3 r = {x, y, z}; return r; }\n"
    "#define LOOM_VEC4(T, N, A) struct __attribute__((aligned(A))) N##4 { T x, y, z, w; }; \\\n"
    "  static __host__ __device__ __forceinline__ N##4 make_##N##4(T x, T y, T z, T w) { \\\n"
    "    N##4 r = {x, y, z, w}; return r; }\n"
    "#define LOOM_VECS(T, N, A1, A2, A3, A4) \\\n"
    "  LOOM_VEC1(T, N, A1) LOOM_VEC2(T, N, A2) LOOM_VEC3(T, N, A3) LOOM_VEC4(T, N, A4)\n"
    "LOOM_VECS(signed char, char, 1, 2, 1, 4)\n"
    "LOOM_VECS(unsigned char, uchar, 1, 2, 1, 4)\n"
    "LOOM_VECS(short, short, 2, 4, 2, 8)\n"
    "LOOM_VECS(unsigned short, ushort, 2, 4, 2, 8)\n"
    "LOOM_VECS(int, int, 4, 8, 4, 16)\n"
    "LOOM_VECS(unsigned int, uint, 4, 8, 4, 16)\n"
    "LOOM_VECS(long, long, 8, 16, 8, 16)\n"
    "LOOM_VECS(unsigned long, ulong, 8, 16, 8, 16)\n"
    "LOOM_VECS(long long, longlong, 8, 16, 8, 16)\n"
    "LOOM_VECS(unsigned long long, ulonglong, 8, 16, 8, 16)\n"
    "LOOM_VECS(float, float, 4, 8, 4, 16)\n"
    "LOOM_VECS(double, double, 8, 16, 8, 16)\n"
    "#undef LOOM_VECS\n"
    "#undef LOOM_VEC1\n"
    "#undef LOOM_VEC2\n"
    "#undef LOOM_VEC3\n"
    "#undef LOOM_VEC4\n"
    "struct dim3 { unsigned int x, y, z; };\n"
    "typedef unsigned long long cudaTextureObject_t;\n"
    "typedef unsigned long long cudaSurfaceObject_t;\n"
    "#include <__clang_cuda_texture_intrinsics.h>\n"
    "template <class T> static __device__ __forceinline__ T tex1Dfetch(cudaTextureObject_t o, int x) {\n"
    "  T r; __nv_tex_surf_handler(\"__tex1Dfetch_v2\", &r, o, x); return r; }\n"
    "template <class T> static __device__ __forceinline__ T tex1D(cudaTextureObject_t o, float x) {\n"
    "  T r; __nv_tex_surf_handler(\"__tex1D_v2\", &r, o, x); return r; }\n"
    "template <class T> static __device__ __forceinline__ T tex2D(cudaTextureObject_t o, float x, float y) {\n"
    "  T r; __nv_tex_surf_handler(\"__tex2D_v2\", &r, o, x, y); return r; }\n"
    "template <class T> static __device__ __forceinline__ T tex3D(cudaTextureObject_t o, float x, float y, float z) {\n"
    "  T r; __nv_tex_surf_handler(\"__tex3D_v2\", &r, o, x, y, z); return r; }\n";
