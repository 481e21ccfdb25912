/* After QEMU's macros: its register names are casts of helper arguments there; the
   importer reads them as names. */
#undef VdV
#undef VsV
#undef VuV
#undef VvV
#undef VwV
#undef VxV
#undef VyV
#undef VddV
#undef VuuV
#undef VvvV
#undef VxxV
#undef QeV
#undef QdV
#undef QsV
#undef QtV
#undef QuV
#undef QvV
#undef QxV
