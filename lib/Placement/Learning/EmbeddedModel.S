/*===- EmbeddedModel.S - The default model, embedded as bytes ------------===//
 *
 * DOPPLER_DEFAULT_MODEL_FILE (a quoted path, set by CMake) is included
 * verbatim; LearnedPolicy::loadDefault() hands the bytes to torch::load.
 * An empty file means "no default model".
 *
 *===----------------------------------------------------------------------===*/
  .section .rodata.dopplerDefaultModel,"a",@progbits
  .balign 64
  .globl dopplerDefaultModelBegin
  .hidden dopplerDefaultModelBegin
  .type dopplerDefaultModelBegin, @object
dopplerDefaultModelBegin:
  .incbin DOPPLER_DEFAULT_MODEL_FILE
  .globl dopplerDefaultModelEnd
  .hidden dopplerDefaultModelEnd
  .type dopplerDefaultModelEnd, @object
dopplerDefaultModelEnd:
  .byte 0

  /* No executable stack for the library that links this. */
  .section .note.GNU-stack,"",@progbits
