/**
 * Settings for every PostgreSQL session weir opens, the replication one included: values are
 * read as PostgreSQL prints them, so the print format must not depend on the server's defaults.
 * ISO dates in UTC, hex bytea, floats in their shortest exact form.
 */
export const SESSION_OPTIONS = [
  "-c DateStyle=ISO",
  "-c TimeZone=UTC",
  "-c IntervalStyle=postgres",
  "-c bytea_output=hex",
  "-c extra_float_digits=1",
].join(" ");
