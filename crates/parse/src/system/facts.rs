//! Derived facts (filled in below).
