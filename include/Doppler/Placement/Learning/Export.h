//===- Export.h - Symbol visibility of the learning library -----*- C++ -*-===//
//
// libDopplerLearning.so is built with hidden visibility (LibTorch and the
// static placement core stay private to it); the classes and functions
// marked DOPPLER_LEARNING_API are its exported C++ interface.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_PLACEMENT_LEARNING_EXPORT_H
#define DOPPLER_PLACEMENT_LEARNING_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define DOPPLER_LEARNING_API __attribute__((visibility("default")))
#else
#define DOPPLER_LEARNING_API
#endif

#endif // DOPPLER_PLACEMENT_LEARNING_EXPORT_H
