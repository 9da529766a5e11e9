// Deterministic number formatting shared by every canonical text: integers
// exactly, doubles in the shortest form that round-trips.
#ifndef BLUEPRINTING_CORE_BASE_FORMAT_H_
#define BLUEPRINTING_CORE_BASE_FORMAT_H_

#include <string>

namespace blueprint {

// FormatDouble: the shortest decimal (up to 17 significant digits, "%.*g"
// style) that parses back to exactly `value`. Integral values of magnitude
// below 2^53 print without exponent or fraction ("12", "-3"). NaN and
// infinities print as "nan", "inf", "-inf" (canonical texts never contain
// them: verifiers reject them first).
std::string FormatDouble(double value);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_BASE_FORMAT_H_
