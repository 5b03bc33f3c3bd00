// ScenarioDocument: loading, parsing, and where an error points.
#include "gui/models/scenario_document.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "gui/tests/support.h"
#include "gui/tests/tests.h"

namespace trainsim::gui::test {

class ScenarioDocumentTest : public QObject {
  Q_OBJECT

 private slots:
  void splitsErrorMessages() {
    ScenarioError e = ParseScenarioError(
        QStringLiteral("extra.json:4:11: instances[0].gpus: expected an integer >= 1, got -2"));
    QCOMPARE(e.file, QStringLiteral("extra.json"));
    QCOMPARE(e.line, 4);
    QCOMPARE(e.column, 11);
    QCOMPARE(e.field, QStringLiteral("instances[0].gpus"));
    QCOMPARE(e.detail, QStringLiteral("instances[0].gpus: expected an integer >= 1, got -2"));
    e = ParseScenarioError(
        QStringLiteral("x.json:7:3: unknown field instances[0].colour (known: a)"));
    QCOMPARE(e.field, QStringLiteral("instances[0].colour"));
    e = ParseScenarioError(QStringLiteral("x.json:1:30: missing required field cluster.instance"));
    QCOMPARE(e.field, QStringLiteral("cluster.instance"));
    e = ParseScenarioError(
        QStringLiteral("x.json:7:12: parallel.tp = 3 does not divide model.heads"));
    QCOMPARE(e.field, QStringLiteral("parallel.tp"));
    e = ParseScenarioError(QStringLiteral("no location here"));
    QCOMPARE(e.line, 0);
    QVERIFY(e.field.isEmpty());
  }

  void locatesABadField() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    ScenarioDocument doc;
    QVERIFY(doc.load(SmallScenarioPath()));
    QVERIFY(!doc.modified());
    QSignalSpy parsed(&doc, &ScenarioDocument::parsed);
    QVERIFY(doc.parse(*TheCatalog()));
    QVERIFY(doc.scenario().has_value());
    QCOMPARE(parsed.count(), 1);
    QCOMPARE(parsed.at(0).at(0).toBool(), true);

    QString text = doc.text();
    text.replace(QStringLiteral("\"global_batch\": 64"), QStringLiteral("\"global_batch\": -5"));
    doc.setText(text);
    QVERIFY(doc.modified());
    const QString path = dir.filePath(QStringLiteral("bad.json"));
    QVERIFY(doc.save(path));
    QVERIFY(!doc.modified());
    QVERIFY(!doc.parse(*TheCatalog()));
    QVERIFY(!doc.scenario().has_value());
    QCOMPARE(parsed.last().at(0).toBool(), false);
    const ScenarioError& e = doc.error();
    QCOMPARE(e.file, path);
    QCOMPARE(e.field, QStringLiteral("training.global_batch"));
    QCOMPARE(e.line, 5);  // the line of "training" in plan-small.json
    QVERIFY2(e.column > 0, qPrintable(e.message));

    doc.setText(QStringLiteral("{\"version\": 1,\n  \"model\": {\"layers\": 8,,}}"));
    QVERIFY(!doc.parse(*TheCatalog()));
    QCOMPARE(doc.error().line, 2);
    QVERIFY2(doc.error().field.isEmpty(), qPrintable(doc.error().message));
  }

  // What the window's title follows: modified() and path() changes.
  void reportsModifiedAndNew() {
    ScenarioDocument doc;
    QSignalSpy modified(&doc, &ScenarioDocument::modifiedChanged);
    QSignalSpy text(&doc, &ScenarioDocument::textChanged);
    QVERIFY(doc.load(SmallScenarioPath()));
    QCOMPARE(modified.count(), 1);
    doc.setText(doc.text() + QStringLiteral(" "));
    doc.setText(doc.text() + QStringLiteral(" "));
    QCOMPARE(modified.count(), 2);  // once, on the first edit
    QCOMPARE(modified.last().at(0).toBool(), true);
    doc.startNew(QStringLiteral("{}"));
    QVERIFY(doc.path().isEmpty());
    QVERIFY(!doc.modified());
    QCOMPARE(doc.text(), QStringLiteral("{}"));
    QCOMPARE(modified.count(), 3);
    QCOMPARE(modified.last().at(0).toBool(), false);
    QCOMPARE(text.count(), 4);
    QVERIFY(!doc.save());  // no path yet
    QVERIFY(doc.error().message.contains(QStringLiteral("cannot write")));
  }
};

std::unique_ptr<QObject> MakeScenarioDocumentTest() {
  return std::make_unique<ScenarioDocumentTest>();
}

}  // namespace trainsim::gui::test

#include "scenario_document_test.moc"
