//! SDK deleters: one module per resource type that this project deletes through the
//! type's own API instead of Cloud Control (docs/destroy.md, "SDK deleters").

pub mod bucket_policy;
pub mod dynamodb;
pub mod ec2_instance;
pub mod ec2_security_group;
pub mod eni;
pub mod eventbus;
pub mod events_rule;
mod iam_common;
pub mod iam_group;
pub mod iam_managed_policy;
pub mod iam_policy;
pub mod iam_role;
pub mod iam_user;
pub mod instance_profile;
pub mod kms;
pub mod lambda;
pub mod layer_version;
pub mod logs;
pub mod queue_policy;
pub mod s3_bucket;
pub mod sns;
pub mod sqs;
pub mod ssm;
pub mod subscription;
pub mod topic_policy;

use crate::error::DeleteError;
use crate::progress::{DeleteProgress, Handle};
use crate::request::DeleteRequest;

/// Most items (rules, network interfaces) a failure message names before it only counts
/// the rest.
pub const NAMED_IN_MESSAGES: usize = 5;

/// `a, b, c (and N more)`: at most [`NAMED_IN_MESSAGES`] items, then a count.
pub fn name_some(items: &[String]) -> String {
    let shown: Vec<&str> = items
        .iter()
        .take(NAMED_IN_MESSAGES)
        .map(String::as_str)
        .collect();
    let mut s = shown.join(", ");
    if items.len() > NAMED_IN_MESSAGES {
        s.push_str(&format!(" (and {} more)", items.len() - NAMED_IN_MESSAGES));
    }
    s
}

/// The answer of `poll` for a deleter whose deletes finish inside `start`.
pub(crate) fn no_poll(req: &DeleteRequest, handle: &Handle) -> Result<DeleteProgress, DeleteError> {
    Err(DeleteError::failed(
        req,
        format!("this deleter finishes inside start and cannot resume a {handle:?} handle"),
    ))
}

/// Ok for success and for NoSuchEntity (the thing to remove is already gone).
pub(crate) fn ignore_no_such_entity<O, E>(
    req: &DeleteRequest,
    action: &str,
    result: Result<
        O,
        aws_smithy_runtime_api::client::result::SdkError<
            E,
            aws_smithy_runtime_api::client::orchestrator::HttpResponse,
        >,
    >,
) -> Result<(), DeleteError>
where
    E: aws_smithy_types::error::metadata::ProvideErrorMetadata + std::error::Error + 'static,
{
    match result {
        Ok(_) => Ok(()),
        Err(e) => {
            let info = crate::error::aws_error_info(&e);
            if info.code_is(&["NoSuchEntity"]) {
                Ok(())
            } else {
                Err(DeleteError::from_aws(req, action, &info))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_at_most_five_items_then_count_the_rest() {
        let items: Vec<String> = (1..=7).map(|i| format!("r{i}")).collect();
        assert_eq!(name_some(&items), "r1, r2, r3, r4, r5 (and 2 more)");
        assert_eq!(name_some(&items[..2]), "r1, r2");
    }
}
