//! Opens a support bundle and says what each file in it is.
