//! CloudFormation reads of the export plan: the type registry (`DescribeType` of a
//! resource type: its schema and provisioning type, docs/export.md, "The registry") and whether a
//! stack of a destination name exists (`DescribeStacks`, docs/export.md, "Step details" S4). What
//! the answers mean is decided in `cdkd_core::export` (`registry::TypeFacts`,
//! `names::absent_from_error`).

use aws_config::{Region, SdkConfig};
use aws_sdk_cloudformation::types::RegistryType;
use cdkd_core::export::names::{absent_from_error, Destination};
use cdkd_core::text::flatten_str;

use crate::calls::CallCounter;
use crate::sdk_error::{classify, ErrorClass};
use crate::sdk_message::readable;
use crate::throttle::{on_throttling, Backoff};

/// `DescribeType`'s answer, as the registry gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryAnswer {
    /// The `Schema` JSON text.
    pub schema: Option<String>,
    /// `ProvisioningType` (`FULLY_MUTABLE`, `IMMUTABLE`, `NON_PROVISIONABLE`).
    pub provisioning_type: Option<String>,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum CfnError {
    /// The registry does not know the type (`TypeNotFoundException`).
    #[error("the CloudFormation registry has no resource type {type_name}")]
    TypeNotFound { type_name: String },
    #[error("DescribeType {type_name} failed: {message}")]
    DescribeType {
        type_name: String,
        message: String,
        class: ErrorClass,
    },
    /// `DescribeStacks` failed with anything but "does not exist".
    #[error("cannot tell whether CloudFormation stack {stack} exists: {message}")]
    DescribeStacks {
        stack: String,
        message: String,
        class: ErrorClass,
    },
}

impl CfnError {
    pub fn class(&self) -> ErrorClass {
        match self {
            CfnError::TypeNotFound { .. } => ErrorClass::NotFound,
            CfnError::DescribeType { class, .. } | CfnError::DescribeStacks { class, .. } => *class,
        }
    }
}

/// The CloudFormation client of one region.
#[derive(Debug, Clone)]
pub struct Cfn {
    pub client: aws_sdk_cloudformation::Client,
    pub backoff: Backoff,
}

impl Cfn {
    /// A client for `region` (the SDK's own region when `None`), counting its requests
    /// in `calls` when given.
    pub fn new(sdk: &SdkConfig, region: Option<&str>, calls: Option<&CallCounter>) -> Self {
        let mut b = aws_sdk_cloudformation::config::Builder::from(sdk);
        if let Some(r) = region {
            b = b.region(Region::new(r.to_string()));
        }
        if let Some(c) = calls {
            b = b.interceptor(c.clone());
        }
        Cfn {
            client: aws_sdk_cloudformation::Client::from_conf(b.build()),
            backoff: Backoff::THROTTLED,
        }
    }

    /// `DescribeType(Type=RESOURCE, TypeName)`, retried on throttling.
    pub async fn describe_type(&self, type_name: &str) -> Result<RegistryAnswer, CfnError> {
        let out = on_throttling(&self.backoff, || {
            self.client
                .describe_type()
                .r#type(RegistryType::Resource)
                .type_name(type_name)
                .send()
        })
        .await
        .map_err(|f| {
            if f.error
                .as_service_error()
                .is_some_and(|e| e.is_type_not_found_exception())
            {
                CfnError::TypeNotFound {
                    type_name: flatten_str(type_name),
                }
            } else {
                CfnError::DescribeType {
                    type_name: flatten_str(type_name),
                    message: readable(&f.error),
                    class: f.class,
                }
            }
        })?;
        Ok(RegistryAnswer {
            schema: out.schema().map(str::to_string),
            provisioning_type: out.provisioning_type().map(|p| p.as_str().to_string()),
        })
    }

    /// `DescribeStacks(StackName)`: the stack's status when one exists (any status,
    /// `REVIEW_IN_PROGRESS` included), absent when the answer says it does not exist.
    pub async fn destination(&self, stack: &str) -> Result<Destination, CfnError> {
        match self.client.describe_stacks().stack_name(stack).send().await {
            Ok(out) => Ok(match out.stacks().first() {
                Some(s) => Destination::Exists {
                    status: s
                        .stack_status()
                        .map(|st| st.as_str().to_string())
                        .unwrap_or_default(),
                },
                None => Destination::Absent,
            }),
            Err(e) => {
                let message = readable(&e);
                if let Some(absent) = absent_from_error(&message) {
                    return Ok(absent);
                }
                Err(CfnError::DescribeStacks {
                    stack: flatten_str(stack),
                    class: classify(&e),
                    message,
                })
            }
        }
    }
}
