# libloomrt: loads AOT bundles and launches their kernels with no LLVM (include/loom/loomrt.h).
# Its own files live in runtime/loomrt/ (libloom globs runtime/*.c and must not get loomrt_* symbols);
# the runtime files below are compiled into both libraries from the same source: the bundle format and
# host-image loader, the host dispatch and thread pool, the CUDA and HIP driver layers and the LLVM-free half of their driver tables, the GPU pool and launch policy, the
# AMD chip table (LLVM-free) and the context's allocator / error plumbing. The library links libc, libm,
# libdl and pthreads only.
set(LOOMRT_SOURCES
  ${PROJECT_SOURCE_DIR}/runtime/loomrt/loomrt.c ${PROJECT_SOURCE_DIR}/runtime/loomrt/loomrt_gpu.c
  ${PROJECT_SOURCE_DIR}/runtime/loomrt/loomrt_drivers.c
  ${PROJECT_SOURCE_DIR}/runtime/bundle_format.c ${PROJECT_SOURCE_DIR}/runtime/bundle_fuse.c
  ${PROJECT_SOURCE_DIR}/runtime/bundle_hostimg.c
  ${PROJECT_SOURCE_DIR}/runtime/host_launch.c ${PROJECT_SOURCE_DIR}/runtime/pool.c
  ${PROJECT_SOURCE_DIR}/runtime/cuda/cuda.c ${PROJECT_SOURCE_DIR}/runtime/cuda/cuda_code.c
  ${PROJECT_SOURCE_DIR}/runtime/cuda/cuda_table.c
  ${PROJECT_SOURCE_DIR}/runtime/hip/hip.c ${PROJECT_SOURCE_DIR}/runtime/hip/hip_table.c
  ${PROJECT_SOURCE_DIR}/codegen/amdgpu_chips.c
  ${PROJECT_SOURCE_DIR}/runtime/gpu/gpu_pool.c ${PROJECT_SOURCE_DIR}/runtime/gpu/gpu_launch_policy.c
  ${PROJECT_SOURCE_DIR}/ir/context.c)
add_library(loomrt SHARED ${LOOMRT_SOURCES})
target_include_directories(loomrt PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                         $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
                                  PRIVATE ${PROJECT_SOURCE_DIR})
set_target_properties(loomrt PROPERTIES C_VISIBILITY_PRESET hidden)
target_compile_definitions(loomrt PRIVATE LOOM_SLEEF_LIB="${LOOM_SLEEF_RUNTIME_NAME}"
  LOOM_SLEEF_SCALAR_LIB="${LOOM_SLEEF_SCALAR_RUNTIME_NAME}")
if(LOOM_CUDA_INCLUDE)
  target_include_directories(loomrt SYSTEM PRIVATE ${LOOM_CUDA_INCLUDE})
endif()
target_link_libraries(loomrt PRIVATE Threads::Threads m dl)
target_link_options(loomrt PRIVATE -Wl,--no-undefined)
# what goes into a wheel next to libloom (once, under its soname: a wheel holds no symlinks); the
# install rules of CMakeLists.txt (LOOM_INSTALL_LIBRARIES) install it for C users
if(SKBUILD)
  install(TARGETS loomrt LIBRARY DESTINATION loom NAMELINK_SKIP)
endif()
