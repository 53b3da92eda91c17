import { encodeWatermark } from "@weir/protocol";
import { describe, expect, it } from "vitest";
import { formatLsn, parseLsn } from "./lsn.js";

describe("LSNs and watermarks", () => {
  it("read an LSN as the 64-bit integer its halves spell, and write it back", () => {
    expect(parseLsn("0/16B3748")).toBe(0x16b3748n);
    expect(parseLsn("16/B374D848")).toBe((0x16n << 32n) | 0xb374d848n);
    expect(parseLsn("FFFFFFFF/FFFFFFFF")).toBe(2n ** 64n - 1n);
    expect(formatLsn(parseLsn("00000000/01947AA0"))).toBe("0/1947AA0");
    expect(() => parseLsn("12345")).toThrow(/not a log sequence number/);
  });

  it("send watermarks as numbers while safe and as decimal strings beyond", () => {
    expect(encodeWatermark(2n ** 53n - 1n)).toBe(9007199254740991);
    expect(encodeWatermark(2n ** 53n)).toBe("9007199254740992");
    expect(encodeWatermark(2n ** 64n - 1n)).toBe("18446744073709551615");
  });
});
