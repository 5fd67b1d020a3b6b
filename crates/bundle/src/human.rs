//! Keeping the end of a file too big to hold: logs are read newest-last, and an incident is
//! usually in the last part, so a file over the per-file limit keeps its last bytes, from a
//! line start, in memory bounded by the limit however large the file.

use std::fs;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// Bytes kept from a file, and the file's full size.
pub(crate) struct Kept {
    /// The whole file, or its end from the first line start within the last `keep` bytes.
    pub bytes: Vec<u8>,
    /// Bytes the file had (read through, or from its metadata).
    pub total: u64,
}

impl Kept {
    /// The file was cut: `bytes` is only its end.
    pub fn is_cut(&self) -> bool {
        (self.bytes.len() as u64) < self.total
    }
}

/// Reads `reader` to its end, keeping only the last `keep` bytes (cut to start at a line)
/// when there are more. Memory: `keep` bytes, whatever the length of the stream.
pub(crate) fn read_tail<R: Read>(mut reader: R, keep: u64) -> io::Result<Kept> {
    let keep = usize::try_from(keep.max(1)).unwrap_or(usize::MAX);
    // Grown as data arrives (a small file costs what it holds), never past `keep`.
    let mut ring: Vec<u8> = Vec::new();
    let mut pos = 0usize;
    let mut total = 0u64;
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        total += n as u64;
        let mut data = &chunk[..n];
        if data.len() >= keep {
            // This chunk alone fills the window.
            ring.clear();
            ring.extend_from_slice(&data[data.len() - keep..]);
            pos = 0;
            continue;
        }
        if ring.len() < keep {
            let room = keep - ring.len();
            let take = room.min(data.len());
            ring.extend_from_slice(&data[..take]);
            data = &data[take..];
        }
        while !data.is_empty() {
            let take = (keep - pos).min(data.len());
            ring[pos..pos + take].copy_from_slice(&data[..take]);
            pos = (pos + take) % keep;
            data = &data[take..];
        }
    }
    if ring.len() == keep {
        ring.rotate_left(pos);
    }
    let mut kept = Kept { bytes: ring, total };
    if kept.is_cut() {
        cut_to_line_start(&mut kept.bytes);
    }
    Ok(kept)
}

/// Reads a file from disk: whole when it fits in `keep` bytes, else its end (a seek, not a
/// read through).
pub(crate) fn read_file_tail(path: &Path, keep: u64) -> io::Result<Kept> {
    let mut file = fs::File::open(path)?;
    let len = file.metadata()?.len();
    if len > keep {
        file.seek(SeekFrom::Start(len - keep))?;
        let mut kept = read_tail(file.take(keep), keep)?;
        kept.total = len;
        cut_to_line_start(&mut kept.bytes);
        return Ok(kept);
    }
    // Read to the end: a file still growing may be longer than its metadata said.
    read_tail(file, keep)
}

/// Drops the partial first line of a cut file.
fn cut_to_line_start(bytes: &mut Vec<u8>) {
    match bytes.iter().position(|&b| b == b'\n') {
        Some(i) => {
            bytes.drain(..=i);
        }
        None => bytes.clear(),
    }
}

/// `1.5 GiB`, `64.0 MiB`, `812 bytes`.
pub(crate) fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} bytes");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect()
    }

    /// A reader that hands out a few bytes at a time.
    struct Trickle<'a>(&'a [u8], usize);
    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.1.min(buf.len()).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn small_input_is_kept_whole() {
        let data = lines(10);
        let kept = read_tail(&data[..], 1000).unwrap();
        assert_eq!(kept.bytes, data);
        assert!(!kept.is_cut());
    }

    #[test]
    fn big_input_keeps_its_end_from_a_line_start() {
        let data = lines(100_000);
        for step in [1, 7, 4096, 1 << 20] {
            let kept = read_tail(Trickle(&data, step), 1000).unwrap();
            assert_eq!(kept.total, data.len() as u64);
            assert!(kept.is_cut());
            assert!(kept.bytes.len() <= 1000);
            assert!(data.ends_with(&kept.bytes), "step {step}");
            assert!(kept.bytes.starts_with(b"line "), "step {step}");
            assert!(kept.bytes.ends_with(b"line 99999\n"));
        }
    }

    #[test]
    fn a_file_is_cut_by_seeking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let data = lines(10_000);
        fs::write(&path, &data).unwrap();
        let kept = read_file_tail(&path, 500).unwrap();
        assert_eq!(kept.total, data.len() as u64);
        assert!(data.ends_with(&kept.bytes) && kept.bytes.starts_with(b"line "));
        let whole = read_file_tail(&path, 1 << 20).unwrap();
        assert_eq!(whole.bytes, data);
    }

    #[test]
    fn sizes_for_people() {
        assert_eq!(human_bytes(812), "812 bytes");
        assert_eq!(human_bytes(64 << 20), "64.0 MiB");
        assert_eq!(human_bytes(3 << 29), "1.5 GiB");
    }
}
