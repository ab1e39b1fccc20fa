// A minimal stand-in for the few Rcpp names sdcMicro's src/Suda2.h uses, so that file compiles as a
// plain C++ program (benchmarks/sdcmicro_suda2/suda2_main.cpp): not Rcpp, only enough of its surface.
#pragma once
#include <cstdio>
#include <iostream>
#include <memory>
#include <vector>

typedef void *SEXP;
#define RcppExport
#define Rprintf printf

namespace Rcpp {
inline std::ostream &Rcout = std::cout;

// Column-major like R; copies share the data, as Rcpp's do.
class NumericMatrix {
 public:
  NumericMatrix() : rows_(0), cols_(0), data_(std::make_shared<std::vector<double>>()) {}
  NumericMatrix(int rows, int cols)
      : rows_(rows), cols_(cols), data_(std::make_shared<std::vector<double>>((size_t)rows * cols, 0.0)) {}
  explicit NumericMatrix(SEXP pointer) : NumericMatrix(*static_cast<NumericMatrix *>(pointer)) {}
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  double &operator()(int i, int j) { return (*data_)[(size_t)j * rows_ + i]; }
  double operator()(int i, int j) const { return (*data_)[(size_t)j * rows_ + i]; }

 private:
  int rows_, cols_;
  std::shared_ptr<std::vector<double>> data_;
};

class LogicalVector {
 public:
  LogicalVector(SEXP pointer) : value_(*static_cast<double *>(pointer) != 0) {}
  bool operator[](int) const { return value_; }

 private:
  bool value_;
};

template <class T>
T as(SEXP pointer) { return static_cast<T>(*static_cast<double *>(pointer)); }

inline NumericMatrix g_result;  // what List::create(Named("Res") = Res) hands back

struct Named {
  explicit Named(const char *) {}
  Named &operator=(const NumericMatrix &matrix) {
    g_result = matrix;
    return *this;
  }
};

struct List {
  static SEXP create(const Named &) { return nullptr; }
};
}  // namespace Rcpp
