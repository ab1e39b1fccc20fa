// sdcMicro's SUDA2 (src/Suda2.h, unchanged) as a command: integer-coded records on stdin, one line per record
// on stdout: the per-variable contributions, the SUDA score and the DIS-SUDA score (what suda2() returns).
//   stdin:  "ROWS COLS DIS_FRACTION" then ROWS lines of COLS integers (codes >= 0)
// Build (SDC: a checkout of github.com/sdcTools/sdcMicro):
//   g++ -O2 -std=c++17 -w -I benchmarks/sdcmicro_suda2 -I $SDC/src -o /tmp/suda2 benchmarks/sdcmicro_suda2/suda2_main.cpp
#include "Rcpp.h"
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <math.h>
#include <float.h>
#include <limits.h>
#include <time.h>
#include "Framework.h"
#include "Suda2.h"

int main() {
  int rows, cols;
  double fraction;
  if (scanf("%d %d %lf", &rows, &cols, &fraction) != 3) return 2;
  Rcpp::NumericMatrix data(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      int value;
      if (scanf("%d", &value) != 1) return 2;
      data(i, j) = value;
    }
  double missing = -999, max_k = cols, original = 1;
  Suda2(&data, &missing, &max_k, &fraction, &original);
  Rcpp::NumericMatrix &result = Rcpp::g_result;
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < result.cols(); ++j) printf(j ? " %.17g" : "%.17g", result(i, j));
    printf("\n");
  }
  return 0;
}
