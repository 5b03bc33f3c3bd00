// The scenario editor page in the window, offscreen: a bad value typed into
// the form shows the parser's message beside that field (no dialog) and
// clears when fixed; a JSON syntax error shows line:col in the page's status;
// the form and the JSON follow each other; save and open again gives the same
// scenario; a screenshot.
#include "gui/app/scenario_page.h"

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QtTest>

#include "gui/app/main_window.h"
#include "gui/models/png_file.h"
#include "gui/tests/support.h"
#include "gui/tests/tests.h"

namespace trainsim::gui::test {

namespace {

constexpr int kWaitMs = 5000;

QLineEdit* LineEdit(ScenarioPage* page, const char* path) {
  return qobject_cast<QLineEdit*>(page->editor(QString::fromLatin1(path)));
}

// Types `text` over the field's contents, as a person would.
void TypeInto(QLineEdit* edit, const QString& text) {
  edit->setFocus();
  edit->selectAll();
  QTest::keyClick(edit, Qt::Key_Backspace);
  QTest::keyClicks(edit, text);
}

bool Valid(ScenarioPage* page) {
  return page->statusLabel()->text().contains(QStringLiteral("Valid"));
}

// The labels of fields other than `path` that show something.
int OtherErrorsShown(ScenarioPage* page, const QString& path) {
  int shown = 0;
  for (const FormField& f : ScenarioFormFields())
    if (f.path != path && !page->errorLabel(f.path)->isHidden()) ++shown;
  return shown;
}

}  // namespace

class ScenarioPageTest : public QObject {
  Q_OBJECT

 private slots:
  void badValueShowsBesideItsField() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openScenario(SmallScenarioPath()));
    ScenarioPage* page = w.scenarioPage();
    QCOMPARE(w.tabs()->currentWidget(), page);
    QCOMPARE(w.tabs()->tabText(0), QStringLiteral("Scenario"));
    QVERIFY2(Valid(page), qPrintable(page->statusLabel()->text()));
    QCOMPARE(w.windowTitle(), QStringLiteral("trainsim — plan-small.json"));
    QLineEdit* batch = LineEdit(page, "training.global_batch");
    QCOMPARE(batch->text(), QStringLiteral("64"));
    QCOMPARE(LineEdit(page, "search.budget_usd")->text(), QStringLiteral("500"));

    // A negative batch: the JSON follows at once, the error comes after the pause.
    TypeInto(batch, QStringLiteral("-8"));
    QVERIFY(page->jsonEdit()->toPlainText().contains(QStringLiteral("\"global_batch\": -8")));
    QVERIFY(w.document()->modified());
    QCOMPARE(w.windowTitle(), QStringLiteral("trainsim — plan-small.json*"));
    QLabel* label = page->errorLabel(QStringLiteral("training.global_batch"));
    QTRY_COMPARE_WITH_TIMEOUT(page->markedField(), QStringLiteral("training.global_batch"),
                              kWaitMs);
    QVERIFY(label->isVisible());
    QCOMPARE(label->text(),
             QStringLiteral("training.global_batch: expected an integer >= 1, got -8"));
    QCOMPARE(label->text(), w.document()->error().detail);
    QVERIFY(batch->property("fieldError").toBool());
    QCOMPARE(OtherErrorsShown(page, QStringLiteral("training.global_batch")), 0);
    QVERIFY(QApplication::activeModalWidget() == nullptr);
    QVERIFY(page->statusLabel()->text().contains(QStringLiteral("Global batch")));
    page->views()->setCurrentWidget(page->jsonEdit());  // the status's link leads back to it
    emit page->statusLabel()->linkActivated(QStringLiteral("field:training.global_batch"));
    QCOMPARE(page->views()->currentIndex(), 0);
    QCOMPARE(w.focusWidget(), batch);

    // A batch the 8 data-parallel replicas do not divide: a check across fields.
    TypeInto(batch, QStringLiteral("100"));
    QTRY_VERIFY_WITH_TIMEOUT(label->text().contains(QStringLiteral("is not divisible")), kWaitMs);
    QCOMPARE(label->text(),
             QStringLiteral("training.global_batch = 100 is not divisible by parallel.dp * "
                            "training.micro_batch = 8 * 1 = 8"));

    // Fixed: the label clears and the mark goes.
    TypeInto(batch, QStringLiteral("128"));
    QTRY_VERIFY_WITH_TIMEOUT(page->markedField().isEmpty(), kWaitMs);
    QVERIFY(label->isHidden());
    QVERIFY(!batch->property("fieldError").toBool());
    QVERIFY(Valid(page));

    // A negative budget, beside the budget.
    QLineEdit* budget = LineEdit(page, "search.budget_usd");
    TypeInto(budget, QStringLiteral("-5"));
    QTRY_COMPARE_WITH_TIMEOUT(page->markedField(), QStringLiteral("search.budget_usd"), kWaitMs);
    QCOMPARE(page->errorLabel(QStringLiteral("search.budget_usd"))->text(),
             QStringLiteral("search.budget_usd: expected a number > 0, got -5"));
    QCOMPARE(OtherErrorsShown(page, QStringLiteral("search.budget_usd")), 0);
    QVERIFY(QDir().mkpath(QStringLiteral(TRAINSIM_SCREENSHOT_DIR)));  // for a look at the error
    QVERIFY(
        SavePng(w.grab().toImage(), QStringLiteral(TRAINSIM_SCREENSHOT_DIR "/scenario-error.png"))
            .ok());

    // Plan with the error: the window stays on the scenario and plans nothing.
    QSignalSpy failed(&w, &MainWindow::planFailed);
    w.tabs()->setCurrentIndex(1);
    w.startPlan();
    QCOMPARE(failed.count(), 1);
    QVERIFY(!w.planning());
    QCOMPARE(w.tabs()->currentWidget(), page);
    QCOMPARE(page->markedField(), QStringLiteral("search.budget_usd"));
    TypeInto(budget, QString());  // cleared: no budget at all
    QTRY_VERIFY_WITH_TIMEOUT(Valid(page), kWaitMs);
    QVERIFY(!page->jsonEdit()->toPlainText().contains(QStringLiteral("budget_usd")));
    QVERIFY(QApplication::activeModalWidget() == nullptr);
  }

  void jsonSyntaxErrorShowsLineAndColumn() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openScenario(SmallScenarioPath()));
    ScenarioPage* page = w.scenarioPage();
    page->views()->setCurrentWidget(page->jsonEdit());
    QPlainTextEdit* json = page->jsonEdit();
    // Two commas at the end of line 3: a syntax error there.
    QTextCursor cursor(json->document()->findBlockByNumber(2));
    cursor.movePosition(QTextCursor::EndOfBlock);
    json->setTextCursor(cursor);
    json->setFocus();
    QTest::keyClicks(json, QStringLiteral(",,"));
    QVERIFY(w.document()->text().contains(QStringLiteral(",,")));
    QTRY_VERIFY_WITH_TIMEOUT(!Valid(page) && w.document()->error().line > 0, kWaitMs);
    const ScenarioError e = w.document()->error();
    QVERIFY2(e.field.isEmpty(), qPrintable(e.message));
    QCOMPARE(e.line, 3);
    const QString at = QStringLiteral("%1:%2").arg(e.line).arg(e.column);
    QVERIFY2(page->statusLabel()->text().contains(at), qPrintable(page->statusLabel()->text()));
    QVERIFY(page->markedField().isEmpty());
    QVERIFY(!page->form().ok());
    QVERIFY(!qobject_cast<QScrollArea*>(page->views()->widget(0))->widget()->isEnabled());

    // The status's link puts the cursor on that line.
    page->views()->setCurrentIndex(0);
    emit page->statusLabel()->linkActivated(QStringLiteral("json:%1:%2").arg(e.line).arg(e.column));
    QCOMPARE(page->views()->currentWidget(), json);
    QCOMPARE(json->textCursor().blockNumber(), e.line - 1);
    QCOMPARE(json->textCursor().positionInBlock(), e.column - 1);

    // Fixed: valid again, and the form reads the JSON again.
    cursor = QTextCursor(json->document()->findBlockByNumber(2));
    cursor.movePosition(QTextCursor::EndOfBlock);
    json->setTextCursor(cursor);
    QTest::keyClick(json, Qt::Key_Backspace);
    QTest::keyClick(json, Qt::Key_Backspace);
    QTRY_VERIFY_WITH_TIMEOUT(Valid(page), kWaitMs);
    QVERIFY(page->form().ok());
    QVERIFY(qobject_cast<QScrollArea*>(page->views()->widget(0))->widget()->isEnabled());

    // A field the form does not have: in the status too, with its line:col.
    QString text = json->toPlainText();
    text.replace(QStringLiteral("\"search\": {"),
                 QStringLiteral("\"sweep\": {\"grid\": 5},\n  \"search\": {"));
    json->setPlainText(text);
    QTRY_VERIFY_WITH_TIMEOUT(!Valid(page), kWaitMs);
    const ScenarioError other = w.document()->error();
    QVERIFY2(other.detail.startsWith(QStringLiteral("sweep.grid: expected an object")),
             qPrintable(other.detail));
    QVERIFY(page->markedField().isEmpty());
    QVERIFY(page->statusLabel()->text().contains(
        QStringLiteral("%1:%2").arg(other.line).arg(other.column)));
    QVERIFY(page->statusLabel()->text().contains(QStringLiteral("sweep.grid")));
  }

  void formAndJsonFollowEachOther() {
    MainWindow w;
    QVERIFY(w.openScenario(SmallScenarioPath()));
    ScenarioPage* page = w.scenarioPage();
    QSignalSpy validated(page, &ScenarioPage::validated);

    // JSON -> form, after the pause.
    QString text = page->jsonEdit()->toPlainText();
    text.replace(QStringLiteral("\"budget_usd\": 500"), QStringLiteral("\"budget_usd\": 900"));
    page->jsonEdit()->setPlainText(text);
    QTRY_COMPARE_WITH_TIMEOUT(LineEdit(page, "search.budget_usd")->text(), QStringLiteral("900"),
                              kWaitMs);
    QTRY_VERIFY_WITH_TIMEOUT(validated.count() >= 1, kWaitMs);
    QCOMPARE(w.document()->text(), text);  // the form did not rewrite the JSON

    // Instance list -> JSON.
    InstancePickerModel* picker = page->instancePicker();
    QCOMPARE(picker->checked(),
             (QStringList{QStringLiteral("p4d.24xlarge"), QStringLiteral("g5.48xlarge")}));
    picker->setData(picker->index(picker->rowOf(QStringLiteral("g5.48xlarge"))), Qt::Unchecked,
                    Qt::CheckStateRole);
    QVERIFY(page->jsonEdit()->toPlainText().contains(
        QStringLiteral("\"instances\": [\"p4d.24xlarge\"]")));
    QVERIFY(page->jsonEdit()->toPlainText().contains(QStringLiteral("\"budget_usd\": 900")));

    // Model preset -> JSON, and the dimensions show the preset's as placeholders.
    auto* model = qobject_cast<QComboBox*>(page->editor(QStringLiteral("model")));
    QCOMPARE(model->currentData().toString(), QStringLiteral("__custom__"));
    QCOMPARE(LineEdit(page, "model.layers")->text(), QStringLiteral("8"));
    const int llama = model->findData(QStringLiteral("llama2-7b"));
    QVERIFY(llama > 0);
    model->setCurrentIndex(llama);
    emit model->activated(llama);
    QVERIFY(page->jsonEdit()->toPlainText().contains(QStringLiteral("\"model\": \"llama2-7b\"")));
    QVERIFY(LineEdit(page, "model.layers")->text().isEmpty());
    QCOMPARE(LineEdit(page, "model.layers")->placeholderText(), QStringLiteral("32"));
    QVERIFY(!page->editor(QStringLiteral("model.mlp"))->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(Valid(page), kWaitMs);

    // A choice -> JSON.
    auto* precision = qobject_cast<QComboBox*>(page->editor(QStringLiteral("training.precision")));
    const int fp16 = precision->findData(QStringLiteral("fp16"));
    precision->setCurrentIndex(fp16);
    const qsizetype checks = validated.count();
    emit precision->activated(fp16);
    QVERIFY(page->form().value(QStringLiteral("training.precision")) == OrderedJson("fp16"));
    QTRY_VERIFY_WITH_TIMEOUT(validated.count() > checks, kWaitMs);
    QVERIFY(validated.last().at(0).toBool());
    QCOMPARE(w.document()->scenario()->scenario.training.precision, Precision::kFp16);

    // Pricing options -> JSON, in the list's order, and back: none checked = every option.
    auto* pricing = qobject_cast<QListWidget*>(page->editor(QStringLiteral("search.pricing")));
    QVERIFY(pricing);
    QCOMPARE(pricing->count(), kPricingOptions);
    pricing->findItems(QStringLiteral("spot-elastic"), Qt::MatchExactly)
        .first()
        ->setCheckState(Qt::Checked);
    pricing->findItems(QStringLiteral("on-demand"), Qt::MatchExactly)
        .first()
        ->setCheckState(Qt::Checked);
    QVERIFY(page->jsonEdit()->toPlainText().contains(
        QStringLiteral("\"pricing\": [\"on-demand\", \"spot-elastic\"]")));
    QTRY_VERIFY_WITH_TIMEOUT(
        w.document()->scenario() &&
            w.document()->scenario()->search.pricing ==
                (std::vector<Pricing>{Pricing::kOnDemand, Pricing::kSpotElastic}),
        kWaitMs);
    text = page->jsonEdit()->toPlainText();
    text.replace(QStringLiteral("[\"on-demand\", \"spot-elastic\"]"),
                 QStringLiteral("[\"capacity-block\"]"));
    page->jsonEdit()->setPlainText(text);
    QTRY_VERIFY_WITH_TIMEOUT(pricing->findItems(QStringLiteral("capacity-block"), Qt::MatchExactly)
                                     .first()
                                     ->checkState() == Qt::Checked,
                             kWaitMs);
    QCOMPARE(
        pricing->findItems(QStringLiteral("on-demand"), Qt::MatchExactly).first()->checkState(),
        Qt::Unchecked);
    QVERIFY(page->jsonEdit()->toPlainText().contains(QStringLiteral("[\"capacity-block\"]")));
  }

  void savedFileOpensAsTheSameScenario() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("edited.json"));
    MainWindow w;
    QVERIFY(w.openScenario(SmallScenarioPath()));
    ScenarioPage* page = w.scenarioPage();
    TypeInto(LineEdit(page, "search.budget_usd"), QStringLiteral("1234"));
    TypeInto(LineEdit(page, "search.deadline_hours"), QStringLiteral("36"));
    QVERIFY(w.windowTitle().endsWith(QLatin1Char('*')));
    QVERIFY(page->saveTo(path));
    QVERIFY(!w.document()->modified());
    QCOMPARE(w.windowTitle(), QStringLiteral("trainsim — edited.json"));
    QVERIFY(Valid(page));
    const PlanningScenario saved = *w.document()->scenario();

    MainWindow again;
    QVERIFY(again.openScenario(path));
    QCOMPARE(again.document()->text(), w.document()->text());
    QTRY_VERIFY_WITH_TIMEOUT(again.document()->scenario().has_value(), kWaitMs);
    const PlanningScenario& s = *again.document()->scenario();
    QCOMPARE(*s.search.budget_usd, 1234.0);
    QCOMPARE(*s.search.deadline_hours, 36.0);
    QCOMPARE(s.search.instances, saved.search.instances);
    QCOMPARE(s.search.confirm_top, saved.search.confirm_top);
    QCOMPARE(s.scenario.training.global_batch, saved.scenario.training.global_batch);
    QCOMPARE(s.scenario.training.tokens, saved.scenario.training.tokens);
    QCOMPARE(ParameterCount(s.scenario.model), ParameterCount(saved.scenario.model));
    QCOMPARE(s.scenario.name, std::string("edited"));
    QCOMPARE(LineEdit(again.scenarioPage(), "search.budget_usd")->text(), QStringLiteral("1234"));

    // Not writable: a message in the status, nothing else.
    QVERIFY(!page->saveTo(dir.filePath(QStringLiteral("no/such/folder/x.json"))));
    QVERIFY(page->statusLabel()->text().contains(QStringLiteral("Not saved")));
  }

  void newStartsFromTheTemplate() {
    MainWindow w;
    QVERIFY(!w.planAction()->isEnabled());
    w.scenarioPage()->newAction()->trigger();
    QVERIFY(w.document()->path().isEmpty());
    QCOMPARE(w.document()->text(), NewScenarioText());
    QCOMPARE(w.windowTitle(), QStringLiteral("trainsim — untitled"));
    QVERIFY(Valid(w.scenarioPage()));
    QVERIFY(w.planAction()->isEnabled());
  }

  void screenshot() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openScenario(QStringLiteral(TRAINSIM_SOURCE_DIR "/scenarios/gpt3-175b-p4d.json")));
    QVERIFY(Valid(w.scenarioPage()));
    QTest::qWait(100);  // let the form lay out
    QCOMPARE(SaveScreenshot(w, QStringLiteral("scenario")), QString());
  }
};

std::unique_ptr<QObject> MakeScenarioPageTest() { return std::make_unique<ScenarioPageTest>(); }

}  // namespace trainsim::gui::test

#include "scenario_page_test.moc"
