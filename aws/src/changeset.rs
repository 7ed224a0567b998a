//! CloudFormation writes and reads of the export's execution (docs/export.md, "Decisions"):
//! create, describe, execute and delete a change set, describe a stack, read its
//! events. Every call is retried on throttling; what a status means is decided in
//! `cdkd_core::export::execute`.

use aws_sdk_cloudformation::types::{Capability, ChangeSetType, Parameter, ResourceToImport, Tag};
use cdkd_core::export::execute::StackEvent;
use cdkd_core::text::flatten_str;
use serde_json::{Map, Value};

use crate::cfn::Cfn;
use crate::sdk_error::ErrorClass;
use crate::sdk_message::readable;
use crate::throttle::on_throttling;

/// A CloudFormation call of the execution that failed.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{operation} on CloudFormation stack {stack} failed: {message}")]
pub struct ChangeSetError {
    pub operation: &'static str,
    pub stack: String,
    pub message: String,
    pub class: ErrorClass,
}

/// How the template travels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateRef {
    Body(String),
    Url(String),
}

/// A change set to create.
#[derive(Debug, Clone)]
pub struct NewChangeSet<'a> {
    pub stack: &'a str,
    pub name: &'a str,
    /// `IMPORT` or `UPDATE`.
    pub change_set_type: &'a str,
    pub template: TemplateRef,
    pub parameters: Vec<(String, String)>,
    pub capabilities: &'a [&'a str],
    /// (type, logical id, identifier) per resource to import.
    pub resources_to_import: Vec<(String, String, Map<String, Value>)>,
    pub role_arn: Option<&'a str>,
    pub tags: Vec<(String, String)>,
}

/// A change set as `DescribeChangeSet` answers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeSetStatus {
    pub arn: String,
    pub stack_id: String,
    pub status: String,
    pub execution_status: Option<String>,
    pub reason: Option<String>,
}

/// A stack as `DescribeStacks` answers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StackStatus {
    pub stack_id: String,
    pub status: String,
    pub reason: Option<String>,
    pub outputs: Vec<(String, String)>,
    pub tags: Vec<(String, String)>,
    /// The keys of its parameters.
    pub parameters: Vec<String>,
}

fn fail<E>(
    operation: &'static str,
    stack: &str,
) -> impl FnOnce(crate::throttle::Failed<E>) -> ChangeSetError
where
    E: aws_sdk_cloudformation::error::ProvideErrorMetadata
        + std::error::Error
        + Send
        + Sync
        + 'static,
{
    let stack = flatten_str(stack);
    move |f| ChangeSetError {
        operation,
        stack,
        message: readable(&f.error),
        class: f.class,
    }
}

fn is_not_found(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("does not exist") || m.contains("changesetnotfound")
}

impl Cfn {
    /// `CreateChangeSet`; returns the change set's ARN and the stack's id.
    pub async fn create_change_set(
        &self,
        c: &NewChangeSet<'_>,
    ) -> Result<(String, String), ChangeSetError> {
        let out = on_throttling(&self.backoff, || {
            let mut req = self
                .client
                .create_change_set()
                .stack_name(c.stack)
                .change_set_name(c.name)
                .change_set_type(ChangeSetType::from(c.change_set_type));
            req = match &c.template {
                TemplateRef::Body(b) => req.template_body(b),
                TemplateRef::Url(u) => req.template_url(u),
            };
            for (k, v) in &c.parameters {
                req = req.parameters(
                    Parameter::builder()
                        .parameter_key(k)
                        .parameter_value(v)
                        .build(),
                );
            }
            for cap in c.capabilities {
                req = req.capabilities(Capability::from(*cap));
            }
            for (ty, id, identifier) in &c.resources_to_import {
                let mut r = ResourceToImport::builder()
                    .resource_type(ty)
                    .logical_resource_id(id);
                for (k, v) in identifier {
                    let v = v
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string());
                    r = r.resource_identifier(k, v);
                }
                req = req.resources_to_import(r.build());
            }
            for (k, v) in &c.tags {
                req = req.tags(Tag::builder().key(k).value(v).build());
            }
            if let Some(role) = c.role_arn {
                req = req.role_arn(role);
            }
            req.send()
        })
        .await
        .map_err(fail("CreateChangeSet", c.stack))?;
        Ok((
            out.id().unwrap_or_default().to_string(),
            out.stack_id().unwrap_or_default().to_string(),
        ))
    }

    /// `DescribeChangeSet` by name (with the stack) or ARN; `None` when there is none.
    pub async fn describe_change_set(
        &self,
        stack: &str,
        name_or_arn: &str,
    ) -> Result<Option<ChangeSetStatus>, ChangeSetError> {
        let res = on_throttling(&self.backoff, || {
            self.client
                .describe_change_set()
                .stack_name(stack)
                .change_set_name(name_or_arn)
                .send()
        })
        .await;
        match res {
            Ok(out) => Ok(Some(ChangeSetStatus {
                arn: out.change_set_id().unwrap_or_default().to_string(),
                stack_id: out.stack_id().unwrap_or_default().to_string(),
                status: out
                    .status()
                    .map(|s| s.as_str().to_string())
                    .unwrap_or_default(),
                execution_status: out.execution_status().map(|s| s.as_str().to_string()),
                reason: out.status_reason().map(str::to_string),
            })),
            Err(f) => {
                let message = readable(&f.error);
                if f.error
                    .as_service_error()
                    .is_some_and(|e| e.is_change_set_not_found_exception())
                    || is_not_found(&message)
                {
                    return Ok(None);
                }
                Err(ChangeSetError {
                    operation: "DescribeChangeSet",
                    stack: flatten_str(stack),
                    message,
                    class: f.class,
                })
            }
        }
    }

    /// `ExecuteChangeSet`.
    pub async fn execute_change_set(&self, stack: &str, arn: &str) -> Result<(), ChangeSetError> {
        on_throttling(&self.backoff, || {
            self.client
                .execute_change_set()
                .stack_name(stack)
                .change_set_name(arn)
                .send()
        })
        .await
        .map_err(fail("ExecuteChangeSet", stack))?;
        Ok(())
    }

    /// `DeleteChangeSet`, best effort: a failure is logged.
    pub async fn delete_change_set(&self, stack: &str, arn: &str) {
        let res = on_throttling(&self.backoff, || {
            self.client
                .delete_change_set()
                .stack_name(stack)
                .change_set_name(arn)
                .send()
        })
        .await;
        if let Err(f) = res {
            tracing::warn!(
                "DeleteChangeSet of {} failed: {}",
                flatten_str(arn),
                readable(&f.error)
            );
        }
    }

    /// How many resources stack `stack` holds (`DescribeStackResources`).
    pub async fn resource_count(&self, stack: &str) -> Result<usize, ChangeSetError> {
        Ok(self.stack_resources(stack).await?.len())
    }

    /// `DescribeStackResources` of `stack`, with the throttling back-off.
    async fn stack_resources(
        &self,
        stack: &str,
    ) -> Result<Vec<aws_sdk_cloudformation::types::StackResource>, ChangeSetError> {
        let out = on_throttling(&self.backoff, || {
            self.client
                .describe_stack_resources()
                .stack_name(stack)
                .send()
        })
        .await
        .map_err(fail("DescribeStackResources", stack))?;
        Ok(out.stack_resources.unwrap_or_default())
    }

    /// The physical ids of the resources stack `stack` lists (`DescribeStackResources`;
    /// deleted ones left out): what a destroy compares with a record's
    /// (`cdkd_core::export::held`).
    pub async fn physical_ids(&self, stack: &str) -> Result<Vec<String>, ChangeSetError> {
        Ok(self
            .stack_resources(stack)
            .await?
            .iter()
            .filter(|r| {
                r.resource_status()
                    .is_none_or(|s| s.as_str() != "DELETE_COMPLETE")
            })
            .filter_map(|r| r.physical_resource_id().map(str::to_string))
            .collect())
    }

    /// `DeleteStack`.
    pub async fn delete_stack(&self, stack: &str) -> Result<(), ChangeSetError> {
        on_throttling(&self.backoff, || {
            self.client.delete_stack().stack_name(stack).send()
        })
        .await
        .map_err(fail("DeleteStack", stack))?;
        Ok(())
    }

    /// `DescribeStacks` of one stack; `None` when it does not exist.
    pub async fn describe_stack(&self, stack: &str) -> Result<Option<StackStatus>, ChangeSetError> {
        let res = on_throttling(&self.backoff, || {
            self.client.describe_stacks().stack_name(stack).send()
        })
        .await;
        match res {
            Ok(out) => Ok(out.stacks().first().map(|s| StackStatus {
                stack_id: s.stack_id().unwrap_or_default().to_string(),
                status: s
                    .stack_status()
                    .map(|st| st.as_str().to_string())
                    .unwrap_or_default(),
                reason: s.stack_status_reason().map(str::to_string),
                outputs: s
                    .outputs()
                    .iter()
                    .map(|o| {
                        (
                            o.output_key().unwrap_or_default().to_string(),
                            o.output_value().unwrap_or_default().to_string(),
                        )
                    })
                    .collect(),
                tags: s
                    .tags()
                    .iter()
                    .map(|t| {
                        (
                            t.key().unwrap_or_default().to_string(),
                            t.value().unwrap_or_default().to_string(),
                        )
                    })
                    .collect(),
                parameters: s
                    .parameters()
                    .iter()
                    .filter_map(|p| p.parameter_key().map(str::to_string))
                    .collect(),
            })),
            Err(f) => {
                let message = readable(&f.error);
                if is_not_found(&message) {
                    return Ok(None);
                }
                Err(ChangeSetError {
                    operation: "DescribeStacks",
                    stack: flatten_str(stack),
                    message,
                    class: f.class,
                })
            }
        }
    }

    /// The first page of `DescribeStackEvents` (newest first).
    pub async fn stack_events(&self, stack: &str) -> Result<Vec<StackEvent>, ChangeSetError> {
        let out = on_throttling(&self.backoff, || {
            self.client.describe_stack_events().stack_name(stack).send()
        })
        .await
        .map_err(fail("DescribeStackEvents", stack))?;
        Ok(out
            .stack_events()
            .iter()
            .map(|e| StackEvent {
                logical_id: e.logical_resource_id().map(str::to_string),
                resource_type: e.resource_type().map(str::to_string),
                status: e
                    .resource_status()
                    .map(|s| s.as_str().to_string())
                    .unwrap_or_default(),
                reason: e.resource_status_reason().map(str::to_string),
            })
            .collect())
    }

    /// `GetTemplate(TemplateStage=Processed)`: the template CloudFormation holds for the
    /// stack, as text.
    pub async fn processed_template(&self, stack: &str) -> Result<String, ChangeSetError> {
        let out = on_throttling(&self.backoff, || {
            self.client
                .get_template()
                .stack_name(stack)
                .template_stage(aws_sdk_cloudformation::types::TemplateStage::Processed)
                .send()
        })
        .await
        .map_err(fail("GetTemplate", stack))?;
        Ok(out.template_body().unwrap_or_default().to_string())
    }

    /// A tag-only `UpdateStack`: the previous template and parameter values, `tags` as
    /// the stack's tags. `Ok(false)` when CloudFormation answers that there is nothing to
    /// update.
    pub async fn update_tags(
        &self,
        stack: &str,
        parameter_keys: &[String],
        tags: &[(String, String)],
        capabilities: &[&str],
        role_arn: Option<&str>,
    ) -> Result<bool, ChangeSetError> {
        let res = on_throttling(&self.backoff, || {
            let mut req = self
                .client
                .update_stack()
                .stack_name(stack)
                .use_previous_template(true);
            for k in parameter_keys {
                req = req.parameters(
                    Parameter::builder()
                        .parameter_key(k)
                        .use_previous_value(true)
                        .build(),
                );
            }
            for (k, v) in tags {
                req = req.tags(Tag::builder().key(k).value(v).build());
            }
            for cap in capabilities {
                req = req.capabilities(Capability::from(*cap));
            }
            if let Some(role) = role_arn {
                req = req.role_arn(role);
            }
            req.send()
        })
        .await;
        match res {
            Ok(_) => Ok(true),
            Err(f) => {
                let message = readable(&f.error);
                if message.contains("No updates are to be performed") {
                    return Ok(false);
                }
                Err(ChangeSetError {
                    operation: "UpdateStack",
                    stack: flatten_str(stack),
                    message,
                    class: f.class,
                })
            }
        }
    }
}
