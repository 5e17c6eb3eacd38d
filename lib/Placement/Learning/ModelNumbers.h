//===- ModelNumbers.h - The numbers of a linear model's text file ---------===//
//
// The learned-moves and learned-construct models are written as text: "//"
// comment lines, then rows of comma-separated numbers. Both readers take
// the numbers with parseModelNumbers and check their count and meaning
// themselves.
//
//===----------------------------------------------------------------------===//

#ifndef DOPPLER_LIB_PLACEMENT_LEARNING_MODELNUMBERS_H
#define DOPPLER_LIB_PLACEMENT_LEARNING_MODELNUMBERS_H

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace doppler::placement {

/// Every number of `text` in order, lines whose first non-blank characters
/// are "//" skipped and commas read as spaces. A word that is not a finite
/// number gives nullopt and, in *error, "<what>: '<word>' is not a finite
/// number".
std::optional<std::vector<double>> parseModelNumbers(std::string_view text,
                                                     const std::string &what,
                                                     std::string *error);

} // namespace doppler::placement

#endif // DOPPLER_LIB_PLACEMENT_LEARNING_MODELNUMBERS_H
