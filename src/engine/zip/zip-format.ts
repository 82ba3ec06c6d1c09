// The zip records' signatures and limits, shared by the reader and the writer.
export const LOCAL = 0x04034b50;
export const CENTRAL = 0x02014b50;
export const END = 0x06054b50;
export const END64 = 0x06064b50;
export const LOCATOR64 = 0x07064b50;
/** The extra field holding zip64 sizes and offsets. */
export const ZIP64_EXTRA = 0x0001;
/** A 32-bit field at this value means "see the zip64 record". */
export const MAX32 = 0xffffffff;
/** The same for 16-bit counts (and the longest comment). */
export const MAX16 = 0xffff;
