//! The templates uploaded as JSON under the run's prefix, for the `export-plan` step.

use cdkd_aws::StateStore;
use cdkd_functions::runs;

use super::error::SourceError;
use super::types::TemplateSet;

/// A template uploaded for a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadedTemplate {
    pub stack: String,
    pub key: String,
}

/// `<prefix>/_runs/<run-id>/templates/<stack>.json`.
pub fn template_key(prefix: &str, run_id: &str, stack: &str) -> String {
    format!(
        "{}/templates/{stack}.json",
        runs::run_prefix(prefix, run_id)
    )
}

/// Uploads every template of `set` as JSON under the run's prefix in the state bucket
/// (`store.prefix`), root first; returns the keys in that order.
pub async fn upload_templates(
    cache: &runs::ArtifactCache,
    store: &StateStore,
    run_id: &str,
    set: &TemplateSet,
) -> Result<Vec<UploadedTemplate>, SourceError> {
    let mut keys = Vec::new();
    for st in set.stacks() {
        let key = template_key(&store.prefix, run_id, &st.stack);
        // Through the run's artifact cache: a local run's steps read it from memory.
        runs::write_immutable(cache, store, &key, &st.template)
            .await
            .map_err(|e| SourceError::Upload {
                stack: st.stack.clone(),
                bucket: store.bucket.clone(),
                key: key.clone(),
                cause: e.message,
            })?;
        keys.push(UploadedTemplate {
            stack: st.stack.clone(),
            key,
        });
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_source_template_key_is_under_the_run() {
        assert_eq!(
            template_key("cdkd", "r-1", "Root~Child"),
            "cdkd/_runs/r-1/templates/Root~Child.json"
        );
    }
}
