(define-symbolic-buffer input uint8_t)
(define-symbolic t12 integer?)
(define axioms (list ))
(define halide-expr
 (vec-add (int16x128 (load input (ramp t12 1 128) (aligned 1 0)))
          (int16x128 (load input (ramp (sca-add t12 1) 128 1) (aligned 1 0)))))
