/* The prelude of harrow's HVX importer (src/targets/hvx/import/mod.rs), put before QEMU's
   macros and ext.idef when clang-19 preprocesses them. EXTINSN leaves one marked record per
   instruction (its tag, assembly syntax, attributes and semantics; the markers are not macro parameters, so
   they pass through). QEMU_GENERATE stays undefined, so QEMU's macros take their C
   definitions rather than the TCG code generators. */
#define EXTINSN(TAG, SYN, ATT, DESCR, SEM) @@INSN TAG @@SYNTAX SYN @@ATTRIBUTES ATT @@SEMANTICS SEM @@END
