/* BL_API marks the library's public functions. The shared library is built
 * with hidden visibility (-fvisibility=hidden), so only what carries BL_API is
 * exported: private helpers cannot become an accidental ABI. The static
 * library holds every symbol (the tests link it to reach private ones). */
#ifndef BRAINLESSLAB_EXPORT_H
#define BRAINLESSLAB_EXPORT_H

#if defined(_WIN32) && defined(BL_BUILDING_SHARED)
#define BL_API __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define BL_API __attribute__((visibility("default")))
#else
#define BL_API
#endif

#endif
