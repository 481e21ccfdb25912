#include <immintrin.h>
#include <string.h>

void mat_mul_2x3_3x3(const float a[2][3], const float b[3][3], float c[2][3]) {
    const float *p0 = (const float *)a;
    const float *p1 = (const float *)b;
    float *p2 = (float *)c;
    __m256 v1 = _mm256_setr_ps(0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f);
    __m256 v2 = v1;
    float t3[8] = {0};
    memcpy(t3, p0 + 0, 6 * sizeof(float));
    __m256 v4 = _mm256_loadu_ps(t3);
    __m256 v5 = __builtin_shufflevector(v4, v4, 0, 0, 0, 3, 3, 3, -1, -1);
    __m256 v6 = _mm256_loadu_ps(p1 + 0);
    __m256 v7 = __builtin_shufflevector(v6, v6, 0, 1, 2, 0, 1, 2, -1, -1);
    __m256 v8 = _mm256_mul_ps(v5, v7);
    __m256 v9 = _mm256_add_ps(v2, v8);
    float t10[8] = {0};
    memcpy(t10, p0 + 0, 6 * sizeof(float));
    __m256 v11 = _mm256_loadu_ps(t10);
    __m256 v12 = __builtin_shufflevector(v11, v11, 1, 1, 1, 4, 4, 4, -1, -1);
    __m256 v13 = _mm256_loadu_ps(p1 + 1);
    __m256 v14 = __builtin_shufflevector(v13, v13, 2, 3, 4, 2, 3, 4, -1, -1);
    __m256 v15 = _mm256_mul_ps(v12, v14);
    __m256 v16 = _mm256_add_ps(v9, v15);
    float t17[8] = {0};
    memcpy(t17, p0 + 0, 6 * sizeof(float));
    __m256 v18 = _mm256_loadu_ps(t17);
    __m256 v19 = __builtin_shufflevector(v18, v18, 2, 2, 2, 5, 5, 5, -1, -1);
    __m256 v20 = _mm256_loadu_ps(p1 + 1);
    __m256 v21 = __builtin_shufflevector(v20, v20, 5, 6, 7, 5, 6, 7, -1, -1);
    __m256 v22 = _mm256_mul_ps(v19, v21);
    __m256 v23 = _mm256_add_ps(v16, v22);
    {
        float t[8];
        _mm256_storeu_ps(t, v23);
        memcpy(p2 + 0, t, 6 * sizeof(float));
    }
}
