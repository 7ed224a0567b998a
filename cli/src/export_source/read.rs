//! The one door: the templates of a stack, from whichever source was given.

use super::app::synthesize;
use super::assembly::read_cloud_assembly;
use super::error::SourceError;
use super::file::read_template_file;
use super::types::{TemplateSet, TemplateSource};

/// Reads the templates of `stack` from `source`. `stack` is required with `--template`;
/// with a cloud assembly it may be omitted when the assembly holds exactly one stack.
pub async fn read_templates(
    source: &TemplateSource,
    stack: Option<&str>,
) -> Result<TemplateSet, SourceError> {
    match source {
        TemplateSource::Template(path) => {
            let stack = stack
                .filter(|s| !s.is_empty())
                .ok_or(SourceError::TemplateNeedsStack)?;
            read_template_file(path, stack)
        }
        TemplateSource::CdkOut(dir) => read_cloud_assembly(dir, stack),
        TemplateSource::App(opts) => synthesize(opts, stack).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CliError;
    use crate::export_source::test_support::*;

    #[tokio::test]
    async fn export_source_template_needs_a_stack_name() {
        let src = TemplateSource::Template(fixtures().join("flat.template.json"));
        let e = read_templates(&src, None).await.expect_err("no stack");
        assert!(matches!(e, SourceError::TemplateNeedsStack));
        assert!(matches!(CliError::from(e), CliError::Usage(_)));
        let set = read_templates(&src, Some("ExportFlat"))
            .await
            .expect("named");
        assert_eq!(set.root.stack, "ExportFlat");
    }
}
