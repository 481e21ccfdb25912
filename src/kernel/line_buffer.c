/* A kernel computed through a line buffer (a template: harrow writes the HV_LB_*
   definitions below, then the kernel's signature named NAME_lines, then this text as its
   body; NAME itself, `line_buffer_choice.c`, calls NAME_lines or the kernel's own code).

   The kernel's body repeats one sub-expression at several row (and column) offsets, as a
   separable stencil repeats its row sums. The *producer* computes that sub-expression for
   one whole line; the *consumer* computes the output row from the lines it needs, each
   read at its column offsets. A line is computed once and read by every output row that
   needs it, instead of once per use. Lines live in a ring of HV_LB_ROWS rows on the
   stack; a row of the output is processed in strips of HV_LB_STRIP columns so that the
   ring's size does not depend on the image's width (and stays in the L1 cache).

   Defined before this text:
     HV_LB_T             the line's C element type
     HV_LB_ROWS          lines a row of output reads (the ring's size)
     HV_LB_YLO           the row offset of the first of them
     HV_LB_XLO           the column offset of the leftmost line element an output reads
     HV_LB_XSPAN         the columns a line needs beyond the strip's width
     HV_LB_STRIP         the strip's width in output columns
     HV_LB_PRODUCE(l, yy, xs, n)   computes n elements of line yy, from column xs, into l
     HV_LB_CONSUME(y, xs, n)       computes n outputs of row y from column xs; it reads
                                   line y + HV_LB_YLO + j as HV_LB_LINE(y, j)        */
#define HV_LB_LINE(y, j) (hv_lines[((y) + (j)) % HV_LB_ROWS])
    HV_LB_T hv_lines[HV_LB_ROWS][HV_LB_STRIP + HV_LB_XSPAN] __attribute__((aligned(128)));
    for (int32_t hv_x0 = 0; hv_x0 < e0; hv_x0 += HV_LB_STRIP) {
        /* The last strip is shifted left to end at the row's end (outputs are pure, so
           computing a few twice is harmless), unless the row is narrower than a strip. */
        int32_t hv_xs = hv_x0, hv_w = HV_LB_STRIP;
        if (e0 - hv_x0 < HV_LB_STRIP) {
            if (e0 >= HV_LB_STRIP) hv_xs = e0 - HV_LB_STRIP;
            else hv_w = e0;
        }
        for (int32_t hv_y = 0; hv_y < e1; hv_y++) {
            /* The first row computes all its lines; each later row only its newest one. */
            int32_t hv_first = hv_y == 0 ? hv_y + HV_LB_YLO : hv_y + HV_LB_YLO + HV_LB_ROWS - 1;
            for (int32_t hv_yy = hv_first; hv_yy < hv_y + HV_LB_YLO + HV_LB_ROWS; hv_yy++) {
                HV_LB_T *hv_line = hv_lines[(hv_yy - HV_LB_YLO) % HV_LB_ROWS];
                HV_LB_PRODUCE(hv_line, hv_yy, hv_xs + HV_LB_XLO, hv_w + HV_LB_XSPAN);
            }
            HV_LB_CONSUME(hv_y, hv_xs, hv_w);
        }
    }
#undef HV_LB_LINE
