#include "launch/names.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace trainsim::launch {
namespace {

using Check = Status (*)(std::string_view, std::string_view);

struct Valid {
  Check check;
  std::string value;
};

TEST(Names, AcceptsValidValues) {
  const Valid kCases[] = {
      {ValidateJobName, "a"},
      {ValidateJobName, "gpt3-175b-p4d"},
      {ValidateJobName, "A--b9"},
      {ValidateJobName, std::string(63, 'x')},
      {ValidateLabel, "GPT3_175B.p4d-1"},
      {ValidateS3Uri, "s3://my-bucket"},
      {ValidateS3Uri, "s3://my.bucket-1/runs/gpt3/"},
      {ValidateS3Uri, "s3://abc/a_b=c/d-e.f"},
      {ValidateRoleArn, "arn:aws:iam::123456789012:role/SageMakerRole"},
      {ValidateRoleArn, "arn:aws-cn:iam::123456789012:role/path/to/Role+x=y,z.w@v_u-t"},
      {ValidateImageUri, "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.0.0-gpu"},
      {ValidateImageUri, "repo/image@sha256:0123abcd"},
      {ValidateEntryPoint, "train.py"},
      {ValidateEntryPoint, "src/my_pkg/train-gpt.py"},
      {ValidateEntryPoint, "a..b/c.py"},
      {ValidatePath, "launch-out"},
      {ValidatePath, "/home/me/my hosts,v2+x=y@z.txt"},
      {ValidateHostName, "node-0"},
      {ValidateHostName, "ip-10-0-0-1.ec2.internal"},
  };
  for (const Valid& c : kCases) EXPECT_TRUE(c.check(c.value, "f").ok()) << c.value;
}

struct Invalid {
  Check check;
  std::string value, message;
};

constexpr char kJob[] =
    "(1 to 63 letters, digits and hyphens, starting and ending with a letter or digit)";
constexpr char kS3[] =
    "(s3://BUCKET/PREFIX, at most 1024 characters: a bucket of 3 to 63 lowercase letters, digits, "
    "'.' and '-' that starts and ends with a letter or digit, a prefix of letters, digits, '.', "
    "'_', '-', '/' and '=')";
constexpr char kRole[] =
    "(arn:aws:iam::ACCOUNT:role/NAME, 20 to 2048 characters, ACCOUNT 12 digits, NAME of letters, "
    "digits and '+=,.@_-/')";
constexpr char kPath[] =
    "(1 to 4096 letters, digits, spaces, '.', '_', '-', '/', '+', ',', '=' and '@', not starting "
    "with '-')";

TEST(Names, RejectsWithExactMessages) {
  const std::string j = "--job-name: ";
  const std::string s = "--s3: ";
  const std::string r = "--role: ";
  const std::string p = "--hosts: ";
  const std::string kRoleOk = "arn:aws:iam::123456789012:role/";
  const Invalid kCases[] = {
      {ValidateJobName, "x; rm -rf ~",
       j +
           "\"x; rm -rf ~\" is not a valid SageMaker training job name: ';' at position 2 is not "
           "allowed " +
           kJob},
      {ValidateJobName, "$(reboot)",
       j +
           "\"$(reboot)\" is not a valid SageMaker training job name: '$' at position 1 is not "
           "allowed " +
           kJob},
      {ValidateJobName, "a`reboot`",
       j +
           "\"a`reboot`\" is not a valid SageMaker training job name: '`' at position 2 is not "
           "allowed " +
           kJob},
      {ValidateJobName, "a\nb",
       j +
           "\"a\\nb\" is not a valid SageMaker training job name: '\\n' at position 2 is not "
           "allowed " +
           kJob},
      {ValidateJobName, "it's",
       j +
           "\"it's\" is not a valid SageMaker training job name: \"'\" at position 3 is not "
           "allowed " +
           kJob},
      {ValidateJobName, "a\"b",
       j +
           "\"a\\\"b\" is not a valid SageMaker training job name: '\"' at position 2 is not "
           "allowed " +
           kJob},
      {ValidateJobName, "a b",
       j + "\"a b\" is not a valid SageMaker training job name: ' ' at position 2 is not allowed " +
           kJob},
      {ValidateJobName, "gpt_3",
       j +
           "\"gpt_3\" is not a valid SageMaker training job name: '_' at position 4 is not "
           "allowed " +
           kJob},
      {ValidateJobName, "caf\xc3\xa9",
       j +
           "\"caf\\u00e9\" is not a valid SageMaker training job name: '\\xc3' at position 4 is "
           "not allowed " +
           kJob},
      {ValidateJobName, "",
       j + "\"\" is not a valid SageMaker training job name: it is empty " + kJob},
      {ValidateJobName, std::string(64, 'x'),
       j + "\"" + std::string(64, 'x') +
           "\" is not a valid SageMaker training job name: it has 64 characters " + kJob},
      {ValidateJobName, "-a",
       j + "\"-a\" is not a valid SageMaker training job name: it starts with a hyphen " + kJob},
      {ValidateJobName, "a-",
       j + "\"a-\" is not a valid SageMaker training job name: it ends with a hyphen " + kJob},
      {ValidateLabel, "x; rm -rf ~",
       "scenario name: \"x; rm -rf ~\" is not a valid name: ';' at position 2 is not allowed (1 to "
       "128 letters, digits, '.', '_' and '-')"},
      {ValidateS3Uri, "https://b/x",
       s +
           "\"https://b/x\" is not a valid S3 URI: it does not "
           "start with s3:// " +
           kS3},
      {ValidateS3Uri, "s3://ab/x",
       s +
           "\"s3://ab/x\" is not a valid S3 URI: the bucket has 2 "
           "characters " +
           kS3},
      {ValidateS3Uri, "s3://My-bucket",
       s +
           "\"s3://My-bucket\" is not a valid S3 URI: 'M' at "
           "position 6 is not allowed in the bucket " +
           kS3},
      {ValidateS3Uri, "s3://-bucket",
       s +
           "\"s3://-bucket\" is not a valid S3 URI: the bucket "
           "starts with '-' " +
           kS3},
      {ValidateS3Uri, "s3://bucket./x",
       s +
           "\"s3://bucket./x\" is not a valid S3 URI: the "
           "bucket ends with '.' " +
           kS3},
      {ValidateS3Uri, "s3://a..b",
       s +
           "\"s3://a..b\" is not a valid S3 URI: the bucket has "
           "\"..\" " +
           kS3},
      {ValidateS3Uri, "s3://bucket/x; rm -rf ~",
       s +
           "\"s3://bucket/x; rm -rf ~\" is not a valid S3 URI: ';' at position 14 is not "
           "allowed in the prefix " +
           kS3},
      {ValidateS3Uri, "s3://bucket/$(reboot)",
       s +
           "\"s3://bucket/$(reboot)\" is not a valid S3 URI: '$' at position 13 is not allowed "
           "in the prefix " +
           kS3},
      {ValidateS3Uri, "s3://bucket/a b",
       s +
           "\"s3://bucket/a b\" is not a valid S3 URI: ' ' at "
           "position 14 is not allowed in the prefix " +
           kS3},
      {ValidateS3Uri, "s3://bucket/" + std::string(1013, 'k'),
       s + "\"s3://bucket/" + std::string(1013, 'k') +
           "\" is not a valid S3 URI: it has 1025 characters " + kS3},
      {ValidateRoleArn, "REPLACE_WITH_ROLE_ARN",
       r +
           "\"REPLACE_WITH_ROLE_ARN\" is not a valid IAM role ARN: it does not start with "
           "arn:aws " +
           kRole},
      {ValidateRoleArn, "arn:aws:s3:::bucket/role/x",
       r +
           "\"arn:aws:s3:::bucket/role/x\" is not a valid IAM role ARN: it is not an IAM ARN (no "
           ":iam:: after arn:aws) " +
           kRole},
      {ValidateRoleArn, "arn:aws:iam::12345:role/x",
       r +
           "\"arn:aws:iam::12345:role/x\" is not a valid IAM role ARN: the account is not 12 "
           "digits " +
           kRole},
      {ValidateRoleArn, "arn:aws:iam::123456789012:user/x",
       r +
           "\"arn:aws:iam::123456789012:user/x\" is not a valid IAM role ARN: it does not name a "
           "role (role/NAME after the account) " +
           kRole},
      {ValidateRoleArn, kRoleOk + "x;reboot",
       r + "\"" + kRoleOk +
           "x;reboot\" is not a valid IAM role ARN: ';' at position 33 is not "
           "allowed in the role name " +
           kRole},
      {ValidateRoleArn, kRoleOk,
       r + "\"" + kRoleOk +
           "\" is not a valid IAM role ARN: the role "
           "name is empty " +
           kRole},
      {ValidateImageUri, "img $(reboot)",
       "--image: \"img $(reboot)\" is not a valid image URI: ' ' at position 4 is not allowed (1 "
       "to 255 letters, digits, '.', '_', '-', '/', ':' and '@', not starting with '-')"},
      {ValidateImageUri, "--help",
       "--image: \"--help\" is not a valid image URI: it starts with '-' (1 to 255 letters, "
       "digits, '.', '_', '-', '/', ':' and '@', not starting with '-')"},
      {ValidateEntryPoint, "../train.py",
       "--entry-point: \"../train.py\" is not a valid entry point: it has a '..' component (a "
       "relative path of 1 to 256 letters, digits, '.', '_', '-' and '/', without a '..' "
       "component, not starting with '-' or '/')"},
      {ValidateEntryPoint, "/abs/train.py",
       "--entry-point: \"/abs/train.py\" is not a valid entry point: it starts with '/' (a "
       "relative path of 1 to 256 letters, digits, '.', '_', '-' and '/', without a '..' "
       "component, not starting with '-' or '/')"},
      {ValidatePath, "hosts; rm -rf ~",
       p + "\"hosts; rm -rf ~\" is not a valid path: ';' at position 6 is not allowed " + kPath},
      {ValidatePath, "~/hosts",
       p +
           "\"~/hosts\" is not a valid path: '~' at position 1 is not "
           "allowed " +
           kPath},
      {ValidatePath, "a*",
       p + "\"a*\" is not a valid path: '*' at position 2 is not allowed " + kPath},
      {ValidatePath, "-rf", p + "\"-rf\" is not a valid path: it starts with '-' " + kPath},
      {ValidatePath, "a\tb",
       p +
           "\"a\\tb\" is not a valid path: '\\t' at position 2 is not "
           "allowed " +
           kPath},
      {ValidateHostName, "node0;reboot",
       "hosts:1: \"node0;reboot\" is not a valid host name: ';' at position 6 is not allowed (1 "
       "to 253 letters, digits, '.' and '-', starting with a letter or digit)"},
      {ValidateHostName, "-node",
       "hosts:1: \"-node\" is not a valid host name: it starts with '-' (1 to 253 letters, "
       "digits, '.' and '-', starting with a letter or digit)"},
  };
  for (const Invalid& c : kCases) {
    const std::string field = c.message.substr(0, c.message.find(": "));
    EXPECT_EQ(c.check(c.value, field).message(), c.message) << c.value;
  }
}

TEST(Names, TrainingPlanArnsAndCapacityBlockIds) {
  const std::string plan = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/my-plan-1";
  EXPECT_TRUE(ValidateTrainingPlanArn(plan, "--training-plan-arn").ok());
  EXPECT_TRUE(ValidateCapacityReservationId("cr-0123456789abcdef0", "--x").ok());
  EXPECT_TRUE(ValidateCapacityReservationId("cr-0123abcd", "--x").ok());
  const struct {
    Status (*check)(std::string_view, std::string_view);
    std::string value;
    std::string problem;
  } kBad[] = {
      {ValidateTrainingPlanArn, "arn:aws:sagemaker:us-east-1:123456789012:training-plan/",
       "the plan name is empty"},
      {ValidateTrainingPlanArn, "arn:aws:sagemaker:x:1:training-plan/a", "it has 37 characters"},
      {ValidateTrainingPlanArn, "arn:aws:iam::123456789012:role/xxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
       "it is not a SageMaker ARN"},
      {ValidateTrainingPlanArn, "arn:aws:sagemaker:us-east-1:1234:training-plan/my-plan-xxxxxxxxxx",
       "the account is not 12 digits"},
      {ValidateTrainingPlanArn, "arn:aws:sagemaker:us-east-1:123456789012:endpoint/my-plan-1x",
       "it does not name a training plan"},
      {ValidateTrainingPlanArn, plan + ";reboot",
       "';' at position 65 is not allowed in the plan name"},
      {ValidateCapacityReservationId, "cr-0123456789ABCDEF0", "'A' at position 14 is not allowed"},
      {ValidateCapacityReservationId, "cr-123", "it has 6 characters"},
      {ValidateCapacityReservationId, "REPLACE_WITH_CAPACITY_BLOCK_ID",
       "it does not start with cr-"},
  };
  for (const auto& c : kBad) {
    const Status st = c.check(c.value, "--opt");
    EXPECT_NE(st.message().find(c.problem), std::string::npos) << st.message();
    EXPECT_EQ(st.message().rfind("--opt: \"" + c.value + "\"", 0), 0u) << st.message();
  }
}

TEST(ShellQuote, QuotesEveryWord) {
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("train.py"), "'train.py'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote("x; rm -rf ~"), "'x; rm -rf ~'");
  EXPECT_EQ(ShellJoin({"sbatch", "my dir/slurm.sbatch"}), "'sbatch' 'my dir/slurm.sbatch'");
}

// The real shell reads each quoted word back unchanged, whatever it holds.
TEST(ShellQuote, RoundTripsThroughSh) {
  const std::string kWords[] = {"x; rm -rf ~", "$(reboot)", "`reboot`", "a\nb", "it's", "'",
                                "\"$HOME\"",   "a\\b",      "*",        "",     "!x",   "a b  c"};
  for (const std::string& w : kWords) {
    const std::string cmd = "printf '%s' " + ShellQuote(w);
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[256];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    EXPECT_EQ(WEXITSTATUS(pclose(p)), 0);
    EXPECT_EQ(out, w);
  }
}

}  // namespace
}  // namespace trainsim::launch
