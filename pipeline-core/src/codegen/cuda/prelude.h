// The DSL's arithmetic in CUDA C++ (and in host C++, for the emulation the
// tests compile with the system's compiler): what src/rt/arith.rs, cast.rs
// and boundary.rs are to the Rust kernels. Integer arithmetic wraps (done in
// unsigned types, where C++ defines it), division is Euclidean and by zero
// gives 0, shifts take their amount modulo the width, float-to-integer
// conversions saturate with NaN giving 0, and float operations are IEEE's:
// kernels are compiled without contraction into FMA (nvcc -fmad=false, host
// -ffp-contract=off) and without fast math.
#include <stdint.h>
#include <math.h>
#include <string.h>

#ifdef __CUDACC__
#define PL_HD __host__ __device__ __forceinline__
#else
#define PL_HD static inline
#endif

namespace pl {

template <class T> struct lim;
#define PL_LIM(T, U, W, MIN, MAX, SIGNED)                                      \
    template <> struct lim<T> {                                                \
        typedef U wide; /* unsigned, at least 32 bits: no promotion to int */  \
        static constexpr T min = MIN;                                          \
        static constexpr T max = MAX;                                          \
        static constexpr int bits = W;                                         \
        static constexpr bool is_signed = SIGNED;                              \
    };
PL_LIM(uint8_t, uint32_t, 8, 0, 255, false)
PL_LIM(uint16_t, uint32_t, 16, 0, 65535, false)
PL_LIM(uint32_t, uint32_t, 32, 0, 4294967295u, false)
PL_LIM(uint64_t, uint64_t, 64, 0, 18446744073709551615ull, false)
PL_LIM(int8_t, uint32_t, 8, -128, 127, true)
PL_LIM(int16_t, uint32_t, 16, -32768, 32767, true)
PL_LIM(int32_t, uint32_t, 32, (-2147483647 - 1), 2147483647, true)
PL_LIM(int64_t, uint64_t, 64, (-9223372036854775807ll - 1), 9223372036854775807ll, true)
#undef PL_LIM

// Wrapping + - * and negation.
template <class T> PL_HD T add(T a, T b) {
    typedef typename lim<T>::wide U;
    return (T)((U)a + (U)b);
}
template <class T> PL_HD T sub(T a, T b) {
    typedef typename lim<T>::wide U;
    return (T)((U)a - (U)b);
}
template <class T> PL_HD T mul(T a, T b) {
    typedef typename lim<T>::wide U;
    return (T)((U)a * (U)b);
}
template <class T> PL_HD T neg(T a) {
    typedef typename lim<T>::wide U;
    return (T)((U)0 - (U)a);
}
template <class T> PL_HD T abs_w(T a) { return lim<T>::is_signed && a < 0 ? neg(a) : a; }

// Euclidean division and remainder; by zero, 0; MIN / -1 wraps to MIN.
template <class T> PL_HD T rem_e(T a, T b) {
    if (b == 0) return 0;
    if (lim<T>::is_signed && b == (T)-1) return 0;
    T r = (T)(a % b);
    if (lim<T>::is_signed && r < 0) r = b < 0 ? sub(r, b) : add(r, b);
    return r;
}
template <class T> PL_HD T div_e(T a, T b) {
    if (b == 0) return 0;
    if (lim<T>::is_signed && b == (T)-1) return neg(a);
    T q = (T)(a / b);
    if (lim<T>::is_signed && (T)(a % b) < 0) q = b > 0 ? sub(q, (T)1) : add(q, (T)1);
    return q;
}

// Shifts by the amount modulo the width: arithmetic right shifts of signed
// values, logical of unsigned ones.
template <class T, class A> PL_HD T shl_w(T a, A amount) {
    typedef typename lim<T>::wide U;
    return (T)((U)a << ((uint32_t)amount & (lim<T>::bits - 1)));
}
template <class T, class A> PL_HD T shr_w(T a, A amount) {
    const uint32_t k = (uint32_t)amount & (lim<T>::bits - 1);
    if (lim<T>::is_signed && a < 0) return (T) ~(T)((typename lim<T>::wide)(T)~a >> k);
    return (T)((typename lim<T>::wide)a >> k);
}

template <class T> PL_HD T min_i(T a, T b) { return b < a ? b : a; }
template <class T> PL_HD T max_i(T a, T b) { return b > a ? b : a; }

// Floats: min and max ignore a NaN operand and keep the first of equal
// values (so min_f(0.0, -0.0) is 0.0); the remainder is floored.
template <class T> PL_HD T min_f(T a, T b) { return (b < a || a != a) ? b : a; }
template <class T> PL_HD T max_f(T a, T b) { return (b > a || a != a) ? b : a; }
PL_HD float floor_f(float a) { return floorf(a); }
PL_HD double floor_f(double a) { return floor(a); }
template <class T> PL_HD T rem_f(T a, T b) {
    const T q = floor_f(a / b);
    const T p = b * q;
    return a - p;
}

// Conversions. Float to integer truncates and saturates, NaN gives 0 (Rust's
// `as`); integer to integer wraps (`as`) or clamps (saturating_cast).
template <class To, class F> PL_HD To f2i(F x) {
    if (x != x) return 0;
    const F lo = (F)lim<To>::min;
    const F hi = (F)lim<To>::max + (F)1; // exactly 2^bits or 2^(bits - 1)
    if (x <= lo) return lim<To>::min;
    if (x >= hi) return lim<To>::max;
    return (To)x;
}
template <class To, class From> PL_HD To sat_i(From x) {
    if (lim<From>::is_signed && x < 0) {
        if (!lim<To>::is_signed) return 0;
        return (int64_t)x < (int64_t)lim<To>::min ? lim<To>::min : (To)x;
    }
    return (uint64_t)x > (uint64_t)lim<To>::max ? lim<To>::max : (To)x;
}
PL_HD float sat_f32(double x) {
    if (x != x) return (float)x;
    const double m = 3.4028234663852886e38; // f32::MAX
    return (float)(x < -m ? -m : x > m ? m : x);
}

// Float constants that have no literal (NaN payloads, infinities).
PL_HD float f32_bits(uint32_t b) {
    float f;
    memcpy(&f, &b, 4);
    return f;
}
PL_HD double f64_bits(uint64_t b) {
    double f;
    memcpy(&f, &b, 8);
    return f;
}

// Boundary conditions: a coordinate mapped into [min, min + extent).
PL_HD int64_t rem_near(int64_t d, int64_t period) {
    if (d >= 0 && d < period) return d;
    if (d < 0 && d >= -period) return d + period;
    const int64_t r = d % period;
    return r < 0 ? r + period : r;
}
// The last coordinate of a range for clamp_last (its first where it is
// empty; a last beyond 32 bits can be no coordinate's). The launcher
// computes it once for each input's dimension.
PL_HD int32_t last_coord(int64_t min, int64_t extent) {
    const int64_t last = extent > 0 ? min + extent - 1 : min;
    return (int32_t)(last > INT32_MAX ? INT32_MAX : last);
}
// c clamped to [min, last] (last >= min).
PL_HD int32_t clamp_last(int32_t c, int32_t min, int32_t last) {
    const int32_t below = c > last ? last : c;
    return below < min ? min : below;
}
PL_HD int32_t clamp_coord(int32_t c, int32_t min, int32_t extent) {
    return clamp_last(c, min, last_coord(min, extent));
}
PL_HD int32_t mirror_coord(int32_t c, int32_t min, int32_t extent) {
    if (extent <= 0) return min;
    const int64_t n = extent;
    int64_t m = rem_near((int64_t)c - min, 2 * n);
    m = m < n ? m : 2 * n - 1 - m;
    return (int32_t)(min + m);
}
PL_HD int32_t mirror_interior_coord(int32_t c, int32_t min, int32_t extent) {
    if (extent <= 1) return min;
    const int64_t n = extent, period = 2 * n - 2;
    int64_t m = rem_near((int64_t)c - min, period);
    m = m < n ? m : period - m;
    return (int32_t)(min + m);
}
PL_HD int32_t wrap_coord(int32_t c, int32_t min, int32_t extent) {
    if (extent <= 0) return min;
    return (int32_t)(min + rem_near((int64_t)c - min, extent));
}

// Math built-ins by type. The host has the C library's, as Rust's std uses.
// On the device, float's transcendental functions are evaluated in double
// and rounded once: CUDA's float versions are up to 2 ulp off (where glibc's
// are within about half an ulp), and the double result rounds to the
// nearest float but in the rarest cases, so both sides give the same bits.
#define PL_MATH1(NAME, F, D)                                                   \
    PL_HD float NAME(float a) { return F(a); }                                 \
    PL_HD double NAME(double a) { return D(a); }
#ifdef __CUDA_ARCH__
#define PL_MATH1_ROUNDED(NAME, F, D)                                           \
    PL_HD float NAME(float a) { return (float)D((double)a); }                  \
    PL_HD double NAME(double a) { return D(a); }
#else
#define PL_MATH1_ROUNDED PL_MATH1
#endif
PL_MATH1(sqrt_, sqrtf, sqrt)
PL_MATH1_ROUNDED(exp_, expf, exp)
PL_MATH1_ROUNDED(log_, logf, log)
PL_MATH1_ROUNDED(sin_, sinf, sin)
PL_MATH1_ROUNDED(cos_, cosf, cos)
PL_MATH1_ROUNDED(tan_, tanf, tan)
PL_MATH1(floor_, floorf, floor)
PL_MATH1(ceil_, ceilf, ceil)
PL_MATH1(round_, roundf, round)
PL_MATH1(trunc_, truncf, trunc)
PL_MATH1(fabs_, fabsf, fabs)
#undef PL_MATH1
#undef PL_MATH1_ROUNDED
#ifdef __CUDA_ARCH__
PL_HD float pow_(float a, float b) { return (float)pow((double)a, (double)b); }
PL_HD float atan2_(float a, float b) { return (float)atan2((double)a, (double)b); }
#else
PL_HD float pow_(float a, float b) { return powf(a, b); }
PL_HD float atan2_(float a, float b) { return atan2f(a, b); }
#endif
PL_HD double pow_(double a, double b) { return pow(a, b); }
PL_HD double atan2_(double a, double b) { return atan2(a, b); }
PL_HD float fma_(float a, float b, float c) { return fmaf(a, b, c); }
PL_HD double fma_(double a, double b, double c) { return fma(a, b, c); }

// Index arithmetic in kernels (codegen/cuda.rs, `is_index`): in 32 bits
// where each symbol a kernel reads is within 2^24 of 0 or one of the
// bounds' infinities (the least and most 64-bit integers), which are 2^28
// there: beyond every coordinate still, and sums of a few such values fit.
PL_HD bool index_narrow(int64_t v) {
    return (v >= -(1ll << 24) && v <= (1ll << 24)) || v == INT64_MAX || v == INT64_MIN;
}
template <class I> PL_HD I inf() { return sizeof(I) == 8 ? (I)INT64_MAX : (I)(1 << 28); }
template <class I> PL_HD I ninf() { return sizeof(I) == 8 ? (I)INT64_MIN : (I)-(1 << 28); }
// Index arithmetic itself: in the 32-bit kernels the values stay far from
// 2^31 (above), so plain signed arithmetic computes them, and the compiler
// may then fold a constant offset into an address; the 64-bit kernels wrap,
// since there the infinities are the extreme 64-bit integers.
template <class I> PL_HD I iadd(I a, I b) { return sizeof(I) == 4 ? a + b : add<I>(a, b); }
template <class I> PL_HD I isub(I a, I b) { return sizeof(I) == 4 ? a - b : sub<I>(a, b); }
template <class I> PL_HD I imul(I a, I b) { return sizeof(I) == 4 ? a * b : mul<I>(a, b); }
// A coordinate plus or minus a small constant (the DSL's 32-bit arithmetic,
// which wraps): in the 32-bit kernels coordinates are within 2^24 of 0, so
// it cannot wrap there and is computed as plain signed arithmetic.
template <class I> PL_HD int32_t cadd(int32_t a, int32_t b) { return sizeof(I) == 4 ? a + b : add<int32_t>(a, b); }
template <class I> PL_HD int32_t csub(int32_t a, int32_t b) { return sizeof(I) == 4 ? a - b : sub<int32_t>(a, b); }
template <class I> PL_HD I pick(int64_t wide, int32_t narrow) { return sizeof(I) == 8 ? (I)wide : (I)narrow; }
template <class I> PL_HD I sym(int64_t v) {
    return sizeof(I) == 8 ? (I)v : v == INT64_MAX ? inf<I>() : v == INT64_MIN ? ninf<I>() : (I)v;
}

// A load from an input: never written while a pipeline runs, so on the
// device through the read-only data cache.
#ifdef __CUDA_ARCH__
template <typename T> __device__ __forceinline__ T ldg(const T* p) { return __ldg(p); }
__device__ __forceinline__ bool ldg(const bool* p) { return __ldg((const unsigned char*)p) != 0; }
#else
template <typename T> static inline T ldg(const T* p) { return *p; }
#endif

// Accesses of N elements of T that make 4, 8 or 16 bytes, at an address
// aligned to their size (`aligned<B>`): one load or store on the device
// where each element would take one (a thread's vector lanes). The host
// copies the bytes.
template <int B> PL_HD bool aligned(const void* p) { return ((uintptr_t)p & (uintptr_t)(B - 1)) == 0; }
#ifdef __CUDA_ARCH__
template <int B> struct pack;
template <> struct pack<4> { typedef unsigned int t; };
template <> struct pack<8> { typedef uint2 t; };
template <> struct pack<16> { typedef uint4 t; };
// From an input: through the read-only data cache, as `ldg`.
template <class T, int N> __device__ __forceinline__ void ldg_vec(const T* p, T* to) {
    typedef typename pack<sizeof(T) * N>::t P;
    const P v = __ldg((const P*)p);
    memcpy(to, &v, sizeof(P));
}
template <class T, int N> __device__ __forceinline__ void ld_vec(const T* p, T* to) {
    typedef typename pack<sizeof(T) * N>::t P;
    const P v = *(const P*)p;
    memcpy(to, &v, sizeof(P));
}
template <class T, int N> __device__ __forceinline__ void st_vec(T* p, const T* from) {
    typedef typename pack<sizeof(T) * N>::t P;
    P v;
    memcpy(&v, from, sizeof(P));
    *(P*)p = v;
}
#else
template <class T, int N> static inline void ldg_vec(const T* p, T* to) { memcpy(to, p, sizeof(T) * N); }
template <class T, int N> static inline void ld_vec(const T* p, T* to) { memcpy(to, p, sizeof(T) * N); }
template <class T, int N> static inline void st_vec(T* p, const T* from) { memcpy(p, from, sizeof(T) * N); }
#endif

} // namespace pl
