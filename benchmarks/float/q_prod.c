/* Composition of two poses, each a unit quaternion (x, y, z, w) and a translation
 * (Diospyros' q-prod): r_q = a_q * b_q, r_t = a_t + rotate(a_q, b_t). */
#include <math.h>

void q_prod(const float a_q[4], const float a_t[3], const float b_q[4], const float b_t[3],
            float r_q[4], float r_t[3]) {
    float ax = a_q[0], ay = a_q[1], az = a_q[2], aw = a_q[3];
    float bx = b_q[0], by = b_q[1], bz = b_q[2], bw = b_q[3];
    r_q[0] = aw * bx + ax * bw + ay * bz - az * by;
    r_q[1] = aw * by - ax * bz + ay * bw + az * bx;
    r_q[2] = aw * bz + ax * by - ay * bx + az * bw;
    r_q[3] = aw * bw - ax * bx - ay * by - az * bz;
    /* t = 2 (q_v x b_t); rotate(q, v) = v + w t + q_v x t */
    float tx = 2.0f * (ay * b_t[2] - az * b_t[1]);
    float ty = 2.0f * (az * b_t[0] - ax * b_t[2]);
    float tz = 2.0f * (ax * b_t[1] - ay * b_t[0]);
    r_t[0] = a_t[0] + b_t[0] + aw * tx + (ay * tz - az * ty);
    r_t[1] = a_t[1] + b_t[1] + aw * ty + (az * tx - ax * tz);
    r_t[2] = a_t[2] + b_t[2] + aw * tz + (ax * ty - ay * tx);
}
