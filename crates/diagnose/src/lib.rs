//! Diagnosis: one clock for every event, incidents, findings, the Report.
