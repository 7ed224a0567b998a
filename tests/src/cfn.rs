//! CloudFormation on the emulator, as the export tests read it: the client, a stack as
//! DescribeStacks answers it, its Outputs, and what it holds.

use std::collections::BTreeMap;

use aws_sdk_cloudformation::types::Stack;

/// The CloudFormation client of the emulator.
pub async fn client() -> aws_sdk_cloudformation::Client {
    aws_sdk_cloudformation::Client::new(&crate::sdk().await)
}

/// The CloudFormation stack `name` as described now; `None` when it does not exist (any
/// other error fails the test).
pub async fn described(name: &str) -> Option<Stack> {
    match client()
        .await
        .describe_stacks()
        .stack_name(name)
        .send()
        .await
    {
        Ok(out) => out.stacks().first().cloned(),
        Err(e) => {
            let text = format!("{e:?}");
            assert!(
                text.contains("does not exist"),
                "DescribeStacks {name}: {text}"
            );
            None
        }
    }
}

/// (key, value) of each Output of `s`, in the order CloudFormation lists them.
pub fn outputs(s: &Stack) -> Vec<(String, String)> {
    s.outputs()
        .iter()
        .map(|o| {
            (
                o.output_key().unwrap_or_default().to_owned(),
                o.output_value().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// Logical id -> physical id of what stack `name` holds.
pub async fn stack_resources(name: &str) -> BTreeMap<String, String> {
    client()
        .await
        .describe_stack_resources()
        .stack_name(name)
        .send()
        .await
        .unwrap_or_else(|e| panic!("DescribeStackResources {name}: {e:?}"))
        .stack_resources()
        .iter()
        .map(|r| {
            (
                r.logical_resource_id().unwrap_or_default().to_owned(),
                r.physical_resource_id().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}
