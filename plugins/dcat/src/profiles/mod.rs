//! The profiles (spec/dcat.md §6–8).
