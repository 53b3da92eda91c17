import { closeSync, openSync, readSync } from "node:fs";

const HEADER_BYTES = 100;
const MAGIC = "SQLite format 3\0";

/**
 * What is wrong with a database file by its 100-byte header, or null: SQLite's own signals, read
 * without opening the database, in constant time whatever its size. A header that is not
 * SQLite's, a page size SQLite never writes, or a file shorter than the pages its header counts
 * (a file cut short). The page count is trusted only while the header says it is current and no
 * write-ahead log holds pages a checkpoint has not yet copied in.
 */
export function headerProblem(file: string, size: number, walBytes: number): string | null {
  if (size < HEADER_BYTES) return `the file (${size} bytes) is shorter than a database header`;
  const header = Buffer.alloc(HEADER_BYTES);
  const fd = openSync(file, "r");
  try {
    readSync(fd, header, 0, HEADER_BYTES, 0);
  } finally {
    closeSync(fd);
  }
  if (header.toString("latin1", 0, MAGIC.length) !== MAGIC)
    return "the file does not start with a SQLite header";
  const raw = header.readUInt16BE(16);
  const pageSize = raw === 1 ? 65_536 : raw;
  if (pageSize < 512 || pageSize > 65_536 || (pageSize & (pageSize - 1)) !== 0) {
    return `the header's page size (${raw}) is not one SQLite writes`;
  }
  const changeCounter = header.readUInt32BE(24);
  const validFor = header.readUInt32BE(92);
  const pages = header.readUInt32BE(28);
  if (walBytes === 0 && changeCounter === validFor && pages > 0 && pages * pageSize > size) {
    return `the file (${size} bytes) is shorter than the ${pages} pages of ${pageSize} bytes its header counts`;
  }
  return null;
}
