//! Renders a Report.
