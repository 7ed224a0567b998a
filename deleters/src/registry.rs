//! Picks the deleter for a record (spec §2.8 step 4, with this project's [R] default to
//! Cloud Control): custom resources → the custom-resource deleter; no-op types → no-op;
//! `provisionedBy: cc-api` → Cloud Control (except types that must not use it, and the
//! VPC-interface types of [`SDK_EVEN_WHEN_CC_API`]); a type
//! with an SDK deleter → that deleter; nested stacks → the workflow; everything else →
//! Cloud Control.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::{DeleteError, DeleteErrorKind};
use crate::progress::{DeleteProgress, Handle};
use crate::request::DeleteRequest;
use crate::Deleter;

/// Types deleted without any AWS call.
pub const NO_OP_TYPES: &[&str] = &[
    "AWS::CDK::Metadata",
    "AWS::CloudFormation::WaitConditionHandle",
    "AWS::AppSync::GraphQLSchema",
    "AWS::EC2::SubnetNetworkAclAssociation",
];

/// The nested-stack type: destroyed by the workflow (children first), never here.
pub const NESTED_STACK_TYPE: &str = "AWS::CloudFormation::Stack";

/// Types Cloud Control must not delete (it refuses them, silently no-ops, or skips
/// needed cleanup): without an SDK deleter they are unsupported.
pub const NOT_FOR_CLOUD_CONTROL: &[&str] = &[
    "AWS::IAM::Role",
    "AWS::IAM::Policy",
    "AWS::IAM::User",
    "AWS::IAM::Group",
    "AWS::IAM::InstanceProfile",
    "AWS::Lambda::LayerVersion",
    "AWS::S3::BucketPolicy",
    "AWS::CloudFormation::WaitCondition",
    "AWS::CloudFormation::CustomResource",
    "AWS::Route53::HostedZone",
    "AWS::Scheduler::Schedule",
];

/// Types whose SDK deleter is used even for a record Cloud Control created (the
/// decision and its reasons are core's).
pub use cdkd_core::destroy::decide::SDK_EVEN_WHEN_CC_API;

/// True for `Custom::*` and `AWS::CloudFormation::CustomResource`.
pub fn is_custom_resource(resource_type: &str) -> bool {
    resource_type.starts_with("Custom::") || resource_type == "AWS::CloudFormation::CustomResource"
}

/// Where a record's delete goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    NoOp,
    CustomResource,
    /// The SDK deleter registered for the type.
    Sdk,
    CloudControl,
    /// `AWS::CloudFormation::Stack`: the workflow runs the child's destroy.
    NestedStack,
    Unsupported(String),
}

/// The routing decision, given whether an SDK deleter exists for the type.
pub fn route(resource_type: &str, provisioned_by: Option<&str>, has_sdk: bool) -> Route {
    if NO_OP_TYPES.contains(&resource_type) {
        return Route::NoOp;
    }
    if is_custom_resource(resource_type) {
        return Route::CustomResource;
    }
    if resource_type == NESTED_STACK_TYPE {
        return Route::NestedStack;
    }
    let cc_allowed = !NOT_FOR_CLOUD_CONTROL.contains(&resource_type);
    let sdk_anyway = has_sdk && SDK_EVEN_WHEN_CC_API.contains(&resource_type);
    if provisioned_by == Some("cc-api") && cc_allowed && !sdk_anyway {
        return Route::CloudControl;
    }
    if has_sdk {
        return Route::Sdk;
    }
    if cc_allowed {
        Route::CloudControl
    } else {
        Route::Unsupported(format!(
            "no deleter for {resource_type}: Cloud Control cannot delete it and cdkd-flow has no SDK deleter for it yet"
        ))
    }
}

/// The deleters of one destroy run.
#[derive(Clone, Default)]
pub struct Registry {
    sdk: BTreeMap<String, Arc<dyn Deleter>>,
    custom: Option<Arc<dyn Deleter>>,
    cloud_control: Option<Arc<dyn Deleter>>,
}

impl Registry {
    /// No deleters yet: every route but no-op answers "unsupported" until one is added.
    pub fn empty() -> Self {
        Registry::default()
    }

    pub fn with_sdk(mut self, resource_type: &str, deleter: Arc<dyn Deleter>) -> Self {
        self.sdk.insert(resource_type.to_owned(), deleter);
        self
    }

    pub fn with_custom_resources(mut self, deleter: Arc<dyn Deleter>) -> Self {
        self.custom = Some(deleter);
        self
    }

    pub fn with_cloud_control(mut self, deleter: Arc<dyn Deleter>) -> Self {
        self.cloud_control = Some(deleter);
        self
    }

    /// Types that have an SDK deleter.
    pub fn sdk_types(&self) -> impl Iterator<Item = &str> {
        self.sdk.keys().map(String::as_str)
    }

    pub fn route_for(&self, resource_type: &str, provisioned_by: Option<&str>) -> Route {
        route(
            resource_type,
            provisioned_by,
            self.sdk.contains_key(resource_type),
        )
    }

    /// The deleter for a record, or why there is none.
    pub fn deleter_for(&self, req: &DeleteRequest) -> Result<Arc<dyn Deleter>, DeleteError> {
        let missing = |what: &str| {
            DeleteError::new(
                req,
                DeleteErrorKind::Unsupported,
                format!("no {what} deleter is configured"),
            )
        };
        match self.route_for(&req.resource_type, req.provisioned_by.as_deref()) {
            Route::NoOp => Ok(Arc::new(crate::noop::NoOpDeleter)),
            Route::CustomResource => self.custom.clone().ok_or_else(|| missing("custom-resource")),
            Route::Sdk => self.sdk.get(&req.resource_type).cloned().ok_or_else(|| missing("SDK")),
            Route::CloudControl => self.cloud_control.clone().ok_or_else(|| missing("Cloud Control")),
            Route::NestedStack => Err(DeleteError::new(
                req,
                DeleteErrorKind::Unsupported,
                "a nested stack is destroyed by the workflow (its child record first), not by a deleter",
            )),
            Route::Unsupported(why) => Err(DeleteError::new(req, DeleteErrorKind::Unsupported, why)),
        }
    }

    /// Routes and starts the delete.
    pub async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        self.deleter_for(req)?.start(req).await
    }

    /// Routes and polls a delete in flight.
    pub async fn poll(
        &self,
        req: &DeleteRequest,
        handle: &Handle,
    ) -> Result<DeleteProgress, DeleteError> {
        self.deleter_for(req)?.poll(req, handle).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routing_cdk_metadata_is_a_no_op() {
        assert_eq!(route("AWS::CDK::Metadata", None, false), Route::NoOp);
    }

    #[test]
    fn routing_custom_resources_never_use_cloud_control() {
        assert_eq!(
            route("Custom::Thing", Some("cc-api"), false),
            Route::CustomResource
        );
        assert_eq!(
            route("AWS::CloudFormation::CustomResource", None, false),
            Route::CustomResource
        );
    }

    #[test]
    fn routing_cc_api_records_go_to_cloud_control_even_with_an_sdk_deleter() {
        assert_eq!(
            route("AWS::S3::Bucket", Some("cc-api"), true),
            Route::CloudControl
        );
    }

    #[test]
    fn routing_cc_api_lambda_and_security_group_use_the_sdk_deleter_that_sweeps_interfaces() {
        for t in SDK_EVEN_WHEN_CC_API {
            assert_eq!(route(t, Some("cc-api"), true), Route::Sdk, "{t}");
            // Without an SDK deleter registered, Cloud Control as before.
            assert_eq!(route(t, Some("cc-api"), false), Route::CloudControl, "{t}");
        }
    }

    #[test]
    fn routing_scheduler_schedule_never_goes_to_cloud_control() {
        assert!(matches!(
            route("AWS::Scheduler::Schedule", Some("cc-api"), false),
            Route::Unsupported(_)
        ));
        assert_eq!(
            route("AWS::Scheduler::Schedule", Some("cc-api"), true),
            Route::Sdk
        );
    }

    #[test]
    fn routing_sdk_types_use_their_sdk_deleter() {
        assert_eq!(route("AWS::SQS::Queue", Some("sdk"), true), Route::Sdk);
        assert_eq!(route("AWS::SQS::Queue", None, true), Route::Sdk);
    }

    #[test]
    fn routing_every_other_type_goes_to_cloud_control() {
        assert_eq!(
            route("AWS::Events::Archive", None, false),
            Route::CloudControl
        );
    }

    #[test]
    fn routing_nested_stacks_belong_to_the_workflow() {
        assert_eq!(
            route("AWS::CloudFormation::Stack", None, false),
            Route::NestedStack
        );
    }

    #[test]
    fn routing_types_cloud_control_cannot_delete_are_unsupported_without_sdk_deleter() {
        assert!(matches!(
            route("AWS::IAM::User", None, false),
            Route::Unsupported(_)
        ));
    }
}
