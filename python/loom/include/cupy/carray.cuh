// SPDX-License-Identifier: Apache-2.0
// loom/include/cupy/carray.cuh: the basics of CuPy's strided-array helpers for CUDA C++ raw kernels, written
// for loom: CArray<T, ndim> (a pointer with a shape and byte strides; element access by a multi-index or by
// a C-order linear index) and CIndexer<ndim> (a linear index turned into a multi-index). It also includes
// <cupy/complex.cuh>, as CuPy's does.
//
// Scope. loom passes an array argument of a raw kernel as its data pointer (8 bytes), never as a CArray
// struct: a kernel parameter of type CArray is refused at launch (its size is not a pointer's). Kernels that
// build a CArray or CIndexer themselves (from a pointer and shapes passed as parameters) compile and run.
#pragma once

#include <cupy/complex.cuh>

template <typename T, int ndim, bool c_contiguous = false, bool use_32bit_indexing = false>
class CArray {
 public:
  typedef ptrdiff_t index_t;
  static const int ndim_ = ndim;

  __host__ __device__ CArray() : data_(0), size_(0) {}
  // shape and strides (in bytes) have ndim entries
  __host__ __device__ CArray(T *data, const ptrdiff_t *shape, const ptrdiff_t *strides) : data_(data), size_(1) {
    for (int d = 0; d < ndim; ++d) {
      shape_[d] = shape[d];
      strides_[d] = strides[d];
      size_ *= shape[d];
    }
  }

  __host__ __device__ T *data() const { return data_; }
  __host__ __device__ ptrdiff_t size() const { return size_; }
  __host__ __device__ const ptrdiff_t *shape() const { return shape_; }
  __host__ __device__ const ptrdiff_t *strides() const { return strides_; }

  // the element at a multi-index (ndim entries)
  __host__ __device__ T &operator[](const ptrdiff_t *idx) const {
    const char *p = reinterpret_cast<const char *>(data_);
    for (int d = 0; d < ndim; ++d) p += strides_[d] * idx[d];
    return *const_cast<T *>(reinterpret_cast<const T *>(p));
  }
  // the element at C-order position i
  __host__ __device__ T &operator[](ptrdiff_t i) const {
    if (c_contiguous) return data_[i];
    const char *p = reinterpret_cast<const char *>(data_);
    for (int d = ndim - 1; d >= 0; --d) {
      ptrdiff_t n = shape_[d], q = n ? i / n : 0;
      p += (i - q * n) * strides_[d];
      i = q;
    }
    return *const_cast<T *>(reinterpret_cast<const T *>(p));
  }

 private:
  T *data_;
  ptrdiff_t size_;
  ptrdiff_t shape_[ndim > 0 ? ndim : 1];
  ptrdiff_t strides_[ndim > 0 ? ndim : 1];
};

template <int ndim, bool use_32bit_indexing = false>
class CIndexer {
 public:
  __host__ __device__ CIndexer() : size_(0) {}
  __host__ __device__ explicit CIndexer(const ptrdiff_t *shape) : size_(1) {
    for (int d = 0; d < ndim; ++d) {
      shape_[d] = shape[d];
      index_[d] = 0;
      size_ *= shape[d];
    }
  }

  __host__ __device__ ptrdiff_t size() const { return size_; }
  __host__ __device__ const ptrdiff_t *shape() const { return shape_; }
  // the multi-index of C-order position i, read back by get()
  __host__ __device__ void set(ptrdiff_t i) {
    for (int d = ndim - 1; d >= 0; --d) {
      ptrdiff_t n = shape_[d], q = n ? i / n : 0;
      index_[d] = i - q * n;
      i = q;
    }
  }
  __host__ __device__ const ptrdiff_t *get() const { return index_; }

 private:
  ptrdiff_t size_;
  ptrdiff_t shape_[ndim > 0 ? ndim : 1];
  ptrdiff_t index_[ndim > 0 ? ndim : 1];
};
