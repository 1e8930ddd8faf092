//! Term translations (`term_translation_*`): a term's translation per language code. Spec:
//! the wave-2 samples 416–434.

pub(crate) mod show;
pub(crate) mod update;
