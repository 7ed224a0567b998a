//! What the IAM deleters share (docs/destroy.md, "SDK deleters"): the existence check whose NoSuchEntity goes
//! to the region guard, removing every managed and inline policy of a role, user or group,
//! undoing group memberships and instance-profile places, and the final delete. While
//! removing something, NoSuchEntity means it is already gone, which is fine.

use std::fmt;

use aws_sdk_iam::Client;

use crate::error::{AwsErrorInfo, DeleteError};
use crate::guard;
use crate::progress::DeleteProgress;
use crate::request::DeleteRequest;

/// An IAM name (a role's, user's or group's), not an ARN or a path.
pub fn is_iam_name(id: &str) -> bool {
    !id.is_empty() && id.len() <= 128 && !id.contains(':') && !id.contains('/')
}

/// Sends an IAM request (a fluent builder): its output, or its failure classified as
/// [`AwsErrorInfo`].
macro_rules! sent {
    ($request:expr) => {
        $request
            .send()
            .await
            .map_err(|e| $crate::error::aws_error_info(&e))
    };
}
pub(crate) use sent;

/// Every item of a paginated IAM listing (a fluent builder), all pages read, or the first
/// failure classified as [`AwsErrorInfo`].
macro_rules! all_items {
    ($request:expr) => {
        $request
            .into_paginator()
            .items()
            .send()
            .try_collect()
            .await
            .map_err(|e| $crate::error::aws_error_info(&e))
    };
}
pub(crate) use all_items;

fn is_no_such_entity(info: &AwsErrorInfo) -> bool {
    info.code_is(&["NoSuchEntity"])
}

/// Turns a classified failure into the deleter's error, naming the failed `action`.
pub(crate) fn failed<'a>(
    req: &'a DeleteRequest,
    action: &'a str,
) -> impl Fn(AwsErrorInfo) -> DeleteError + 'a {
    move |info| DeleteError::from_aws(req, action, &info)
}

/// The output of the call that reads an IAM entity, `None` when IAM says it does not exist
/// (then the caller answers with [`not_found`]).
pub(crate) fn existing<O>(
    req: &DeleteRequest,
    action: &str,
    outcome: Result<O, AwsErrorInfo>,
) -> Result<Option<O>, DeleteError> {
    match outcome {
        Ok(out) => Ok(Some(out)),
        Err(info) if is_no_such_entity(&info) => Ok(None),
        Err(info) => Err(DeleteError::from_aws(req, action, &info)),
    }
}

/// The region guard's verdict on an IAM entity (`what`: `role`, `user`, ...) that IAM says
/// does not exist.
pub(crate) fn not_found(
    req: &DeleteRequest,
    iam: &Client,
    what: &str,
    name: &str,
) -> Result<DeleteProgress, DeleteError> {
    guard::not_found(
        req,
        iam.config().region().map(|r| r.as_ref()),
        is_iam_name(name),
        &format!("IAM says {what} {name} does not exist"),
    )
}

/// Ok when a removal succeeded or what it removes is already gone (NoSuchEntity); else
/// the failure, naming `action`.
fn removed<O>(
    req: &DeleteRequest,
    action: &str,
    outcome: Result<O, AwsErrorInfo>,
) -> Result<(), DeleteError> {
    existing(req, action, outcome).map(drop)
}

/// How the final delete treats DeleteConflict (something attached between the listing
/// and the delete).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnConflict {
    /// Retry it later.
    Retry,
    /// As the error classification says.
    AsClassified,
}

/// The answer to the final delete of an entity: NoSuchEntity means someone else finished
/// the job (it existed a moment ago).
pub(crate) fn deleted<O>(
    req: &DeleteRequest,
    action: &str,
    on_conflict: OnConflict,
    outcome: Result<O, AwsErrorInfo>,
) -> Result<DeleteProgress, DeleteError> {
    match outcome {
        Ok(_) => Ok(DeleteProgress::Done),
        Err(info) if is_no_such_entity(&info) => Ok(DeleteProgress::Done),
        Err(mut info) => {
            info.retryable |= on_conflict == OnConflict::Retry && info.code_is(&["DeleteConflict"]);
            Err(DeleteError::from_aws(req, action, &info))
        }
    }
}

/// Takes `user` out of `group`; already out is fine. A failure names `named` (the user or
/// the group, whichever the caller goes through).
pub(crate) async fn remove_user_from_group(
    req: &DeleteRequest,
    iam: &Client,
    group: &str,
    user: &str,
    named: &str,
) -> Result<(), DeleteError> {
    let out = sent!(iam
        .remove_user_from_group()
        .group_name(group)
        .user_name(user));
    removed(req, &format!("RemoveUserFromGroup {named}"), out)
}

/// Takes `role` out of instance profile `profile`; already out is fine. A failure names
/// `named` (the profile or the role, whichever the caller goes through).
pub(crate) async fn remove_role_from_instance_profile(
    req: &DeleteRequest,
    iam: &Client,
    profile: &str,
    role: &str,
    named: &str,
) -> Result<(), DeleteError> {
    let request = iam.remove_role_from_instance_profile();
    let out = sent!(request.instance_profile_name(profile).role_name(role));
    removed(req, &format!("RemoveRoleFromInstanceProfile {named}"), out)
}

/// An IAM identity that policies attach to.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Principal<'a> {
    Role(&'a str),
    User(&'a str),
    Group(&'a str),
}

/// `role NAME`, `user NAME` or `group NAME`.
impl fmt::Display for Principal<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Role(n) => write!(f, "role {n}"),
            Self::User(n) => write!(f, "user {n}"),
            Self::Group(n) => write!(f, "group {n}"),
        }
    }
}

impl Principal<'_> {
    /// Detaches every managed policy of this principal, then deletes every inline one,
    /// those attached outside the stack too.
    pub(crate) async fn remove_policies(
        self,
        req: &DeleteRequest,
        iam: &Client,
    ) -> Result<(), DeleteError> {
        let kind = self.kind();
        let attached = self.attached_policy_arns(iam).await;
        for arn in attached.map_err(failed(req, &format!("ListAttached{kind}Policies")))? {
            let out = self.detach_policy(iam, &arn).await;
            removed(req, &format!("Detach{kind}Policy {arn}"), out)?;
        }
        let inline = self.inline_policy_names(iam).await;
        for name in inline.map_err(failed(req, &format!("List{kind}Policies")))? {
            let out = self.delete_inline_policy(iam, &name).await;
            removed(req, &format!("Delete{kind}Policy {name}"), out)?;
        }
        Ok(())
    }

    /// `Role`, `User` or `Group`, as in IAM action names (`DeleteRolePolicy`).
    pub(crate) fn kind(self) -> &'static str {
        match self {
            Self::Role(_) => "Role",
            Self::User(_) => "User",
            Self::Group(_) => "Group",
        }
    }

    async fn attached_policy_arns(self, iam: &Client) -> Result<Vec<String>, AwsErrorInfo> {
        let attached = match self {
            Self::Role(n) => all_items!(iam.list_attached_role_policies().role_name(n)),
            Self::User(n) => all_items!(iam.list_attached_user_policies().user_name(n)),
            Self::Group(n) => all_items!(iam.list_attached_group_policies().group_name(n)),
        }?;
        Ok(attached.into_iter().filter_map(|p| p.policy_arn).collect())
    }

    async fn detach_policy(self, iam: &Client, arn: &str) -> Result<(), AwsErrorInfo> {
        match self {
            Self::Role(n) => sent!(iam.detach_role_policy().role_name(n).policy_arn(arn)).map(drop),
            Self::User(n) => sent!(iam.detach_user_policy().user_name(n).policy_arn(arn)).map(drop),
            Self::Group(n) => {
                sent!(iam.detach_group_policy().group_name(n).policy_arn(arn)).map(drop)
            }
        }
    }

    async fn inline_policy_names(self, iam: &Client) -> Result<Vec<String>, AwsErrorInfo> {
        match self {
            Self::Role(n) => all_items!(iam.list_role_policies().role_name(n)),
            Self::User(n) => all_items!(iam.list_user_policies().user_name(n)),
            Self::Group(n) => all_items!(iam.list_group_policies().group_name(n)),
        }
    }

    /// Deletes the inline policy `policy` of this principal.
    pub(crate) async fn delete_inline_policy(
        self,
        iam: &Client,
        policy: &str,
    ) -> Result<(), AwsErrorInfo> {
        match self {
            Self::Role(n) => {
                sent!(iam.delete_role_policy().role_name(n).policy_name(policy)).map(drop)
            }
            Self::User(n) => {
                sent!(iam.delete_user_policy().user_name(n).policy_name(policy)).map(drop)
            }
            Self::Group(n) => {
                sent!(iam.delete_group_policy().group_name(n).policy_name(policy)).map(drop)
            }
        }
    }
}
