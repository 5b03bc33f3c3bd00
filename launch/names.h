// What may go into a launch bundle: checks for every name, path and URI a
// bundle writes (docs/launch.md, "Validation and quoting"), and the quoting
// every value written into a shell script or printed command goes through.
//
// Each check returns Ok or an InvalidInput whose message starts with `field`
// (how the user gave the value: "--job-name", "scenario name"), shows the
// value as a JSON string, says what is wrong and states the rule:
//   --job-name: "x; rm -rf ~" is not a valid SageMaker training job name: ';' at
//   position 2 is not allowed (1 to 63 letters, digits and hyphens, starting and
//   ending with a letter or digit)
// Positions count bytes from 1. Pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trainsim::launch {

// A SageMaker training job name (CreateTrainingJob.TrainingJobName): 1-63
// characters matching ^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}. Also the Slurm job
// name and the torchrun rendezvous id.
Status ValidateJobName(std::string_view name, std::string_view field);

// A Kubernetes object name that the Kubeflow training operator can derive Service names from
// (an RFC 1035 label): 1-63 lowercase letters, digits and hyphens, starting with a letter and
// ending with a letter or digit. The PyTorchJob's name on HyperPod EKS.
Status ValidateKubernetesName(std::string_view name, std::string_view field);

// A label written into comments and READMEs (a scenario name, an instance
// type): 1-128 letters, digits, '.', '_' and '-'.
Status ValidateLabel(std::string_view label, std::string_view field);

// s3://BUCKET or s3://BUCKET/PREFIX, at most 1024 characters (the API's
// limit): the bucket 3-63 lowercase letters, digits, '.' and '-', starting and
// ending with a letter or digit, no ".."; the prefix letters, digits and
// '.', '_', '-', '/', '='.
Status ValidateS3Uri(std::string_view uri, std::string_view field);

// An IAM role ARN (CreateTrainingJob.RoleArn): arn:aws[a-z-]*:iam::ACCOUNT:role/NAME,
// ACCOUNT 12 digits, NAME of letters, digits and '+=,.@_-/'; 20-2048 characters.
Status ValidateRoleArn(std::string_view arn, std::string_view field);

// A SageMaker training plan ARN (ResourceConfig.TrainingPlanArn): 50-2048
// characters, arn:aws[a-z-]*:sagemaker:REGION:ACCOUNT:training-plan/NAME, REGION
// of lowercase letters, digits and '-', ACCOUNT 12 digits, NAME of letters,
// digits and '-' (the API's pattern, DescribeTrainingPlan).
Status ValidateTrainingPlanArn(std::string_view arn, std::string_view field);

// An EC2 Capacity Block reservation id: "cr-" and 8 or 17 lowercase hex digits.
Status ValidateCapacityReservationId(std::string_view id, std::string_view field);

// A container image URI (AlgorithmSpecification.TrainingImage): 1-255
// letters, digits and '.', '_', '-', '/', ':', '@', not starting with '-'.
Status ValidateImageUri(std::string_view uri, std::string_view field);

// The training script, relative to the source folder: 1-256 letters, digits
// and '.', '_', '-', '/', no ".." component, not starting with '-' or '/'.
Status ValidateEntryPoint(std::string_view path, std::string_view field);

// A file or folder path on this machine (--out, --hosts): 1-4096 letters,
// digits, spaces and '.', '_', '-', '/', '+', ',', '=', '@', not starting
// with '-'. No quotes, '$', '`', ';', '~', glob or control characters.
Status ValidatePath(std::string_view path, std::string_view field);

// A host name (hosts file): 1-253 letters, digits, '.' and '-', starting with
// a letter or digit.
Status ValidateHostName(std::string_view host, std::string_view field);

// `word` as one shell word: always in single quotes, each ' written as '\''.
// ShellQuote("it's") == "'it'\\''s'". Safe for any bytes.
std::string ShellQuote(std::string_view word);
// The words, each ShellQuote'd, joined by single spaces: a command line to paste.
std::string ShellJoin(const std::vector<std::string>& argv);

}  // namespace trainsim::launch
