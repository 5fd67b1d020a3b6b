//! The `pgmortem` command line.
