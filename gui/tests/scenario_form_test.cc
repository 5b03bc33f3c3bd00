// The scenario editor without widgets: the instance picker under
// QAbstractItemModelTester, and the form <-> JSON mapping (ScenarioForm).
#include "gui/models/scenario_form.h"

#include <QAbstractItemModelTester>
#include <QFile>
#include <QSignalSpy>
#include <QtTest>

#include "core/model_zoo.h"
#include "gui/models/instance_picker_model.h"
#include "gui/tests/support.h"
#include "gui/tests/tests.h"

namespace trainsim::gui::test {

namespace {

QString ReadText(const QString& path) { return QString::fromUtf8(ReadFile(path)); }

Expected<Scenario> Parse(const QString& text) {
  return ParseScenario(text.toStdString(), "edited.json", *TheCatalog());
}

Expected<PlanningScenario> ParsePlanning(const QString& text) {
  return ParsePlanningScenario(text.toStdString(), "edited.json", *TheCatalog());
}

std::vector<std::string> Keys(const OrderedJson& object) {
  std::vector<std::string> keys;
  for (auto it = object.begin(); it != object.end(); ++it) keys.push_back(it.key());
  return keys;
}

}  // namespace

class ScenarioFormTest : public QObject {
  Q_OBJECT

 private slots:
  void instancePickerUnderTester() {
    InstancePickerModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(m.rowCount(), 0);
    m.setCatalog(TheCatalog().get());
    const int types = static_cast<int>(TheCatalog()->Names().size());
    QCOMPARE(m.rowCount(), types);
    QSignalSpy changed(&m, &InstancePickerModel::checkedChanged);

    // A name the catalog lacks gets a row of its own, after the catalog's.
    m.setChecked({QStringLiteral("p4d.24xlarge"), QStringLiteral("p9.x")});
    QCOMPARE(m.rowCount(), types + 1);
    const QModelIndex unknown = m.index(types);
    QCOMPARE(unknown.data(InstancePickerModel::kNameRole).toString(), QStringLiteral("p9.x"));
    QVERIFY(!unknown.data(InstancePickerModel::kKnownRole).toBool());
    const QModelIndex p4d = m.index(m.rowOf(QStringLiteral("p4d.24xlarge")));
    QCOMPARE(p4d.data(Qt::CheckStateRole).toInt(), static_cast<int>(Qt::Checked));
    QVERIFY(p4d.data(Qt::DisplayRole).toString().contains(QStringLiteral("A100")));
    QVERIFY(p4d.data(InstancePickerModel::kAwsRole).toBool());
    QCOMPARE(changed.count(), 0);  // set by the program: no checkedChanged

    // The user checks g5 and unchecks p4d: the order is kept, new ones appended.
    const QModelIndex g5 = m.index(m.rowOf(QStringLiteral("g5.48xlarge")));
    QVERIFY(g5.flags() & Qt::ItemIsUserCheckable);
    QVERIFY(m.setData(g5, Qt::Checked, Qt::CheckStateRole));
    QCOMPARE(m.checked(), (QStringList{QStringLiteral("p4d.24xlarge"), QStringLiteral("p9.x"),
                                       QStringLiteral("g5.48xlarge")}));
    QVERIFY(m.setData(p4d, Qt::Unchecked, Qt::CheckStateRole));
    QCOMPARE(m.checked(), (QStringList{QStringLiteral("p9.x"), QStringLiteral("g5.48xlarge")}));
    QCOMPARE(changed.count(), 2);
    QVERIFY(!m.setData(g5, QStringLiteral("x"), Qt::DisplayRole));

    // Resetting drops the unknown row.
    m.setChecked({});
    QCOMPARE(m.rowCount(), types);
    QVERIFY(m.checked().isEmpty());
    QCOMPARE(changed.count(), 2);
  }

  void budgetIsWrittenAndClearedAndTheRestKept() {
    ScenarioForm form;
    QString text = ReadText(SmallScenarioPath());
    // A section the form does not edit, with a null in it, is kept as it is.
    text.replace(QStringLiteral("\"version\": 1,"),
                 QStringLiteral("\"version\": 1, \"sweep\": {\"grid\": {\"cluster.nodes\": [1, "
                                "2]}}, \"x_note\": null,"));
    QVERIFY(form.setText(text));
    const OrderedJson before = form.root();
    QCOMPARE(form.fieldText(QStringLiteral("search.budget_usd")), QStringLiteral("500"));

    form.setFieldText(QStringLiteral("search.budget_usd"), QStringLiteral("750"));
    QCOMPARE(form.value(QStringLiteral("search.budget_usd")), OrderedJson(750));
    QVERIFY(form.text().contains(QStringLiteral("\"budget_usd\": 750")));
    QCOMPARE(Keys(form.root()), Keys(before));  // same sections, same order
    QCOMPARE(form.root()["sweep"], before["sweep"]);
    QVERIFY(form.root()["x_note"].is_null());
    QCOMPARE(Keys(form.root()["search"]), Keys(before["search"]));

    form.setFieldText(QStringLiteral("search.budget_usd"), QString());
    QVERIFY(!form.root()["search"].contains("budget_usd"));
    QVERIFY(form.value(QStringLiteral("search.budget_usd")).is_null());
    QCOMPARE(form.root()["search"]["confirm_top"], OrderedJson(3));
    QCOMPARE(form.root()["sweep"], before["sweep"]);

    // A new field goes into its section, made when missing; an emptied
    // optional section goes away, a required one stays.
    form.setFieldText(QStringLiteral("parallel.tp"), QStringLiteral("2"));
    QCOMPARE(form.root()["parallel"], OrderedJson({{"tp", 2}}));
    form.setFieldText(QStringLiteral("parallel.tp"), QString());
    QVERIFY(!form.root().contains("parallel"));
    form.setFieldText(QStringLiteral("training.tokens"), QString());
    form.setFieldText(QStringLiteral("training.global_batch"), QString());
    QVERIFY(form.root()["training"].is_object() && form.root()["training"].empty());
  }

  void textBecomesTheRightJsonType() {
    using K = FieldKind;
    QCOMPARE(ScenarioForm::ValueFromText(QStringLiteral(" -8 "), K::kInteger), OrderedJson(-8));
    QCOMPARE(ScenarioForm::ValueFromText(QStringLiteral("3e11"), K::kNumber),
             OrderedJson(int64_t{300000000000}));
    QCOMPARE(ScenarioForm::ValueFromText(QStringLiteral("0.5"), K::kNumberOrText),
             OrderedJson(0.5));
    QCOMPARE(ScenarioForm::ValueFromText(QStringLiteral("min-time"), K::kNumberOrText),
             OrderedJson("min-time"));
    QCOMPARE(ScenarioForm::ValueFromText(QStringLiteral("abc"), K::kInteger), OrderedJson("abc"));
    QCOMPARE(ScenarioForm::ValueFromText(QStringLiteral("false"), K::kBool), OrderedJson(false));
    QCOMPARE(ScenarioForm::ValueFromText(QStringLiteral("64"), K::kText), OrderedJson("64"));
    QVERIFY(ScenarioForm::ValueFromText(QStringLiteral("  "), K::kNumber).is_null());
    QCOMPARE(ScenarioForm::TextFromValue(OrderedJson(2e9)), QStringLiteral("2000000000"));
    QCOMPARE(ScenarioForm::TextFromValue(OrderedJson(0.25)), QStringLiteral("0.25"));
    QCOMPARE(ScenarioForm::TextFromValue(OrderedJson(true)), QStringLiteral("true"));
    QCOMPARE(ScenarioForm::TextFromValue(OrderedJson(nullptr)), QString());
  }

  void editedScenarioParses() {
    ScenarioForm form;
    QVERIFY(form.setText(ReadText(SmallScenarioPath())));
    form.setFieldText(QStringLiteral("search.budget_usd"), QStringLiteral("1234.5"));
    form.setFieldText(QStringLiteral("search.deadline_hours"), QStringLiteral("48"));
    form.setFieldText(QStringLiteral("search.spot_allowed"), QStringLiteral("false"));
    form.setFieldText(QStringLiteral("search.objective"), QStringLiteral("0.25"));
    form.setFieldText(QStringLiteral("training.precision"), QStringLiteral("fp16"));
    form.setFieldList(QStringLiteral("search.instances"), {QStringLiteral("p5.48xlarge")});
    Expected<PlanningScenario> s = ParsePlanning(form.text());
    QVERIFY2(s.ok(), s.status().message().c_str());
    QVERIFY(s->has_search);
    QCOMPARE(*s->search.budget_usd, 1234.5);
    QCOMPARE(*s->search.deadline_hours, 48.0);
    QVERIFY(!s->search.spot_allowed);
    QCOMPARE(s->search.objective, Objective::kWeighted);
    QCOMPARE(s->search.time_weight, 0.25);
    QCOMPARE(s->scenario.training.precision, Precision::kFp16);
    QCOMPARE(s->search.instances, std::vector<std::string>{"p5.48xlarge"});
    QCOMPARE(s->scenario.model.layers, 8);  // untouched

    // A bad value is written as typed: the parser, not the form, says why.
    form.setFieldText(QStringLiteral("training.global_batch"), QStringLiteral("-8"));
    s = ParsePlanning(form.text());
    QVERIFY(!s.ok());
    QVERIFY2(QString::fromStdString(s.status().message())
                 .endsWith(QStringLiteral("training.global_batch: expected an integer >= 1, "
                                          "got -8")),
             s.status().message().c_str());
  }

  // The switches of the later issues (flash attention, sequence parallelism, offload, the
  // interleaved chunks, TP overlap) are form fields too, written where the parser reads them.
  void trainingAndParallelSwitchesAreFields() {
    ScenarioForm form;
    QVERIFY(form.setText(
        QStringLiteral("{\"model\": \"gpt3-175b\", \"training\": {\"global_batch\": 256}, "
                       "\"cluster\": {\"instance\": \"p4d.24xlarge\", \"nodes\": 32}, "
                       "\"parallel\": {\"tp\": 8, \"pp\": 8, \"zero_stage\": 3}}")));
    form.setFieldText(QStringLiteral("training.flash_attention"), QStringLiteral("false"));
    form.setFieldText(QStringLiteral("training.sequence_parallel"), QStringLiteral("true"));
    form.setFieldText(QStringLiteral("training.offload_params"), QStringLiteral("true"));
    form.setFieldText(QStringLiteral("parallel.schedule"), QStringLiteral("interleaved"));
    form.setFieldText(QStringLiteral("parallel.virtual_stages"), QStringLiteral("2"));
    form.setFieldText(QStringLiteral("parallel.tp_overlap"), QStringLiteral("true"));
    Expected<Scenario> s = Parse(form.text());
    QVERIFY2(s.ok(), s.status().message().c_str());
    QVERIFY(!s->training.flash_attention);
    QVERIFY(s->training.sequence_parallel);
    QVERIFY(s->training.offload_params);
    QVERIFY(s->training.offload_optimizer);  // implied by parameter offload
    QCOMPARE(s->parallel.virtual_stages, 2);
    QVERIFY(s->parallel.tp_overlap);

    // Cleared, a field leaves the JSON and its default applies.
    form.setFieldText(QStringLiteral("parallel.tp_overlap"), QString());
    QVERIFY(!form.root()["parallel"].contains("tp_overlap"));
    s = Parse(form.text());
    QVERIFY2(s.ok(), s.status().message().c_str());
    QVERIFY(!s->parallel.tp_overlap);

    // The FP8 recipe, which the parser takes with fp8 precision only.
    form.setFieldText(QStringLiteral("cluster.instance"), QStringLiteral("p5.48xlarge"));
    form.setFieldText(QStringLiteral("training.precision"), QStringLiteral("fp8"));
    form.setFieldText(QStringLiteral("training.fp8_scaling"), QStringLiteral("rowwise"));
    s = Parse(form.text());
    QVERIFY2(s.ok(), s.status().message().c_str());
    QCOMPARE(s->training.fp8_scaling, Fp8Scaling::kRowwise);

    // The attention kernel, which the parser takes with flash attention only.
    form.setFieldText(QStringLiteral("training.flash_attention"), QStringLiteral("true"));
    form.setFieldText(QStringLiteral("training.attention_kernel"), QStringLiteral("cudnn"));
    s = Parse(form.text());
    QVERIFY2(s.ok(), s.status().message().c_str());
    QCOMPARE(s->training.attention_kernel, AttentionKernel::kCudnn);

    // Full recompute of every 2nd layer.
    form.setFieldText(QStringLiteral("training.recompute"), QStringLiteral("full"));
    form.setFieldText(QStringLiteral("training.recompute_every"), QStringLiteral("2"));
    s = Parse(form.text());
    QVERIFY2(s.ok(), s.status().message().c_str());
    QCOMPARE(s->training.recompute_every, 2);

    // Op-level checkpointing.
    form.setFieldText(QStringLiteral("training.recompute_every"), QString());
    form.setFieldText(QStringLiteral("training.recompute"), QStringLiteral("selective_op"));
    s = Parse(form.text());
    QVERIFY2(s.ok(), s.status().message().c_str());
    QCOMPARE(s->training.recompute, Recompute::kSelectiveOp);

    // Gradients reduced in fp32.
    form.setFieldText(QStringLiteral("training.grad_reduce_dtype"), QStringLiteral("fp32"));
    s = Parse(form.text());
    QVERIFY2(s.ok(), s.status().message().c_str());
    QCOMPARE(s->training.grad_reduce_dtype, GradReduceDtype::kFp32);
  }

  void modelForms() {
    ScenarioForm form;
    QVERIFY(form.setText(QStringLiteral("{\"model\": \"gpt3-175b\", \"training\": {}}")));
    QCOMPARE(form.modelForm(), ScenarioForm::ModelForm::kPreset);
    QCOMPARE(form.fieldText(QStringLiteral("model")), QStringLiteral("gpt3-175b"));
    // An override turns the name into {"preset": ...}; clearing it turns it back.
    form.setFieldText(QStringLiteral("model.seq_len"), QStringLiteral("4096"));
    QCOMPARE(form.modelForm(), ScenarioForm::ModelForm::kOverrides);
    QCOMPARE(form.root()["model"], OrderedJson({{"preset", "gpt3-175b"}, {"seq_len", 4096}}));
    form.setModelPreset(QStringLiteral("gpt-1.7b"));  // overrides kept
    QCOMPARE(form.root()["model"], OrderedJson({{"preset", "gpt-1.7b"}, {"seq_len", 4096}}));
    form.setFieldText(QStringLiteral("model.seq_len"), QString());
    QCOMPARE(form.root()["model"], OrderedJson("gpt-1.7b"));
    QCOMPARE(Keys(form.root()), (std::vector<std::string>{"model", "training"}));

    // Custom dimensions start from the preset's: the same model, spelled out.
    form.setModelPreset(QStringLiteral("llama2-70b"));
    form.setCustomModel();
    QCOMPARE(form.modelForm(), ScenarioForm::ModelForm::kCustom);
    QCOMPARE(form.root()["model"]["kv_heads"], OrderedJson(8));
    QCOMPARE(form.root()["model"]["mlp"], OrderedJson("swiglu"));
    form.setFieldText(QStringLiteral("training.global_batch"), QStringLiteral("64"));
    form.setFieldText(QStringLiteral("cluster.instance"), QStringLiteral("p5.48xlarge"));
    form.setFieldText(QStringLiteral("cluster.nodes"), QStringLiteral("8"));
    Expected<Scenario> s = Parse(form.text());
    QVERIFY2(s.ok(), s.status().message().c_str());
    const ModelSpec preset = *FindModel("llama2-70b");
    QCOMPARE(ParameterCount(s->model), ParameterCount(preset));
    QCOMPARE(ForwardFlopsPerSample(s->model), ForwardFlopsPerSample(preset));

    form.setModelPreset(QStringLiteral("bert-large"));
    QCOMPARE(form.root()["model"], OrderedJson("bert-large"));
    QVERIFY(
        form.setText(QStringLiteral("{\"model\": {\"layer_list\": [{\"forward_flops\": 1}]}}")));
    QCOMPARE(form.modelForm(), ScenarioForm::ModelForm::kLayerList);
    QVERIFY(form.modelPreset().isEmpty());
  }

  void errorsFindTheirField() {
    QCOMPARE(FormFieldForError(QStringLiteral("training.global_batch")),
             QStringLiteral("training.global_batch"));
    QCOMPARE(FormFieldForError(QStringLiteral("search.instances[2]")),
             QStringLiteral("search.instances"));
    QCOMPARE(FormFieldForError(QStringLiteral("search.nodes")), QStringLiteral("search.nodes.max"));
    QCOMPARE(FormFieldForError(QStringLiteral("model.preset")), QStringLiteral("model"));
    QCOMPARE(FormFieldForError(QStringLiteral("model")), QStringLiteral("model"));
    QVERIFY(FormFieldForError(QStringLiteral("cluster.stragglers[0].slowdown")).isEmpty());
    QCOMPARE(FormFieldForError(QStringLiteral("parallel.bucket_mb")),
             QStringLiteral("parallel.bucket_mb"));
    QVERIFY(FormFieldForError(QStringLiteral("model.layer_list[0].params")).isEmpty());
    QVERIFY(FormFieldForError(QStringLiteral("search")).isEmpty());
    QVERIFY(FormFieldForError(QString()).isEmpty());
    for (const FormField& f : ScenarioFormFields()) QCOMPARE(FormFieldForError(f.path), f.path);
  }

  void layoutIsStableAndTheTemplateParses() {
    ScenarioForm form;
    QVERIFY(form.setText(
        ReadText(QStringLiteral(TRAINSIM_SOURCE_DIR "/scenarios/gpt3-175b-p4d.json"))));
    const QString once = form.text();
    QVERIFY(once.contains(
        QStringLiteral("\"instances\": [\"p4d.24xlarge\", \"p4de.24xlarge\", \"p5.48xlarge\"]")));
    QVERIFY(once.contains(QStringLiteral("\"nodes\": {\"min\": 32, \"max\": 256}")));
    QVERIFY(form.setText(once));
    QCOMPARE(form.text(), once);

    QVERIFY(!form.setText(QStringLiteral("{\"model\": ")));
    QVERIFY(!form.syntaxError().isEmpty());
    QVERIFY(!form.setText(QStringLiteral("[1, 2]")));
    QCOMPARE(form.root(), OrderedJson::parse(once.toStdString()));  // the last good tree

    Expected<PlanningScenario> s = ParsePlanning(NewScenarioText());
    QVERIFY2(s.ok(), s.status().message().c_str());
    QVERIFY(s->has_search);
  }
};

std::unique_ptr<QObject> MakeScenarioFormTest() { return std::make_unique<ScenarioFormTest>(); }

}  // namespace trainsim::gui::test

#include "scenario_form_test.moc"
