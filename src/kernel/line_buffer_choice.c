/* The choice between a kernel's line buffer and its own code, per call (a template:
   harrow writes the HV_LB_* definitions of `line_buffer.c` and these, then the kernel's
   signature, then this text as its body). The lines pay for their calls and for the lines
   a strip computes before its first output row only on images wide and tall enough: per
   output element of a strip w wide and h tall they add A / w + B / h + C / (w h) cycles to
   the steady state, which saves D.

   Defined before this text:
     HV_LB_A, HV_LB_B, HV_LB_C, HV_LB_D   the estimate's coefficients (float literals)
     HV_LB_MIN_W, HV_LB_MIN_H             the widths and heights below which the lines
                                          cannot pay (A / w or B / h alone is D or more)
     HV_LB_LINES()       calls the line-buffered code with this function's arguments
     HV_LB_DIRECT()      calls the kernel's own code with this function's arguments */
    /* Two integer comparisons first: on HVX, where a small kernel's call is a few hundred
       packets, even this estimate in single precision took 1% of gaussian3x3 at 256x16.
       The strip's width caps w. */
    if (e0 > HV_LB_MIN_W && e1 > HV_LB_MIN_H
        && HV_LB_A * (float)e1 + HV_LB_B * (float)(e0 < HV_LB_STRIP ? e0 : HV_LB_STRIP) + HV_LB_C
               < HV_LB_D * (float)(e0 < HV_LB_STRIP ? e0 : HV_LB_STRIP) * (float)e1) {
        HV_LB_LINES();
    } else {
        HV_LB_DIRECT();
    }
