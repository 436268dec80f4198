// The kinds of finding (kc_findings.def) and the one way a worker writes one: its JSON, which
// runtime/cudacheck/cpu/findings/ turns into the declared exception.
#pragma once
#include <stdarg.h>
#include <stdio.h>

namespace kc {

enum class Finding : int {
#define KC_FINDING(kind, exception, fields) kind,
#include "kc_findings.def"
#undef KC_FINDING
};

inline const char* finding_name(Finding f) {
    static const char* const names[] = {
#define KC_FINDING(kind, exception, fields) #kind,
#include "kc_findings.def"
#undef KC_FINDING
    };
    return names[int(f)];
}

// snprintf of a finding of kind f: `{"kind":"<f>",` and then fmt, the rest of its fields.
__attribute__((format(printf, 4, 5))) inline int finding(char* buf, size_t n, Finding f, const char* fmt, ...) {
    int k = snprintf(buf, n, "{\"kind\":\"%s\",", finding_name(f));
    va_list ap;
    va_start(ap, fmt);
    k += vsnprintf(buf + k, n - size_t(k), fmt, ap);
    va_end(ap);
    return k;
}

}  // namespace kc
