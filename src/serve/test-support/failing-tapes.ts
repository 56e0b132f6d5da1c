/** A tape store whose writes fail as on a full disk once `faults.failAfter` frames of a tape were written. */
import { fileTapeStore, type TapeStore } from "../../batch/tape-store.js";

export interface TapeFaults {
  /** Frames each tape takes before its writes fail (ENOSPC). @defaultValue Infinity */
  failAfter: number;
}

export function failingTapeStore(faults: TapeFaults): (dir: string, secrets: readonly string[]) => TapeStore {
  return (dir, secrets) => {
    const store = fileTapeStore(dir, secrets);
    return {
      ...store,
      open(id, header, replace) {
        const writer = store.open(id, header, replace);
        let written = 0;
        return {
          ...writer,
          write(frame) {
            if (written >= faults.failAfter)
              throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
            written++;
            writer.write(frame);
          },
        };
      },
    };
  };
}
