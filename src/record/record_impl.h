/* Internals shared by the record sources (record.c, identity.c). */
#ifndef BL_RECORD_IMPL_H
#define BL_RECORD_IMPL_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <time.h>

/* Software and host identity as cJSON objects (NULL when out of memory);
 * the caller owns them. */
cJSON *bl_identity_software(void);
cJSON *bl_identity_host(void);

/* "YYYY-MM-DDTHH:MM:SSZ" for T (UTC). */
void bl_format_utc(time_t t, char buf[32]);

#endif
