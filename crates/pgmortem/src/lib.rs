//! pgmortem: `analyze(path) -> Report`.
