(define-symbolic-buffer src uint8_t)
(define-symbolic-buffer wts int16_t)
(define-symbolic off integer?)
(define a (load src (ramp 0 1 64) (aligned 0 0)))
(define b (load src (ramp 1 1 64) (aligned 0 1)))
(define w (load wts (ramp off 1 64) (aligned 0 0)))

(define axioms
  (list (values-range-from wts -128 127)))

(define halide-expr
 (vec-max (int16x64 (vec-add (uint16x64 a) (uint16x64 b))) (vec-mul w (x64 (int16_t 3)))))
