// Set by the compiler (`--use WEIR_QUERIES=<0|1>`, asconfig.json), declared here for editors.
declare const WEIR_QUERIES: i32;
