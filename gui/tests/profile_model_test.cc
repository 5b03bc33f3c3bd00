// LoadedProfile and ProfileCurvesModel (under QAbstractItemModelTester) on a
// profile trainsim-calibrate wrote on a 2-core machine (gui/tests/data), and
// on variants of it that name a built-in catalog GPU or none.
#include <QAbstractItemModelTester>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <nlohmann/json.hpp>

#include "gui/models/loaded_profile.h"
#include "gui/models/profile_curves_model.h"
#include "gui/tests/support.h"
#include "gui/tests/tests.h"

namespace trainsim::gui::test {
namespace {

const ProfileCurve* FindCurve(const ProfileCurvesModel& m, ProfileCurve::Kind kind,
                              const QString& name) {
  for (const ProfileCurve& c : m.curves()) {
    if (c.kind == kind && c.name == name) return &c;
  }
  return nullptr;
}

// The profile's text with `edit` applied to its JSON.
QByteArray Edited(void (*edit)(nlohmann::ordered_json*)) {
  nlohmann::ordered_json j =
      nlohmann::ordered_json::parse(ReadFile(CpuProfilePath()).toStdString());
  edit(&j);
  return QByteArray::fromStdString(j.dump(2));
}

size_t PointsOfKind(const HardwareProfile& p, const std::string& kind) {
  return static_cast<size_t>(std::count_if(p.points.begin(), p.points.end(),
                                           [&](const ProfilePoint& x) { return x.kind == kind; }));
}

}  // namespace

class ProfileModelTest : public QObject {
  Q_OBJECT

 private slots:
  void cpuProfileAgainstItsOwnCatalog() {
    Expected<LoadedProfile> lp = LoadProfileFile(CpuProfilePath(), TheCatalog().get());
    QVERIFY2(lp.ok(), lp.status().message().c_str());
    QCOMPARE(lp->profile.gpu, std::string("local-cpu-core"));
    QVERIFY(lp->catalog_gpu);
    QCOMPARE(lp->catalog_source, QStringLiteral("the profile's catalog"));

    ProfileCurvesModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    auto shared = std::make_shared<const LoadedProfile>(std::move(*lp));
    model.setProfile(shared);
    const HardwareProfile& p = shared->profile;
    const size_t gemm_rows = p.gemm_tables.at("fp32").size();
    QCOMPARE(static_cast<size_t>(model.rowCount()),
             gemm_rows + PointsOfKind(p, "memory") + PointsOfKind(p, "collective"));

    // GEMM fp32 against the catalog entry the profile carries (its best measured rate).
    const ProfileCurve* fp32 = FindCurve(model, ProfileCurve::kGemm, QStringLiteral("fp32"));
    QVERIFY(fp32);
    QCOMPARE(fp32->points.size(), gemm_rows);
    QCOMPARE(*fp32->peak, *shared->catalog_gpu->fp32_flops / 1e12);
    QCOMPARE(model.index(0, ProfileCurvesModel::kKind).data().toString(), QStringLiteral("GEMM"));
    QCOMPARE(
        model.index(0, ProfileCurvesModel::kSize).data(ProfileCurvesModel::kRawRole).toDouble(),
        p.gemm_tables.at("fp32")[0].x);
    const double measured =
        model.index(0, ProfileCurvesModel::kMeasured).data(ProfileCurvesModel::kRawRole).toDouble();
    QCOMPARE(measured, p.gemm_tables.at("fp32")[0].y / 1e12);
    QCOMPARE(model.index(0, ProfileCurvesModel::kShareOfPeak)
                 .data(ProfileCurvesModel::kRawRole)
                 .toDouble(),
             measured / *fp32->peak);
    QVERIFY(model.index(0, ProfileCurvesModel::kMeasured)
                .data()
                .toString()
                .endsWith(QStringLiteral(" TFLOP/s")));

    // Memory: the device-memory tests against the catalog bandwidth.
    const ProfileCurve* copy = FindCurve(model, ProfileCurve::kMemory, QStringLiteral("copy"));
    QVERIFY(copy);
    QCOMPARE(*copy->peak, *shared->catalog_gpu->hbm_GBps);

    // Collectives: over 2 ranks against the profile's NVLink (shared memory)
    // figure; over 1 rank no peak (null, not 0).
    const ProfileCurve* ar2 =
        FindCurve(model, ProfileCurve::kCollective, QStringLiteral("all_reduce 2 ranks"));
    const ProfileCurve* ar1 =
        FindCurve(model, ProfileCurve::kCollective, QStringLiteral("all_reduce 1 rank"));
    QVERIFY(ar2 && ar1);
    QVERIFY(shared->catalog_nvlink_GBps);
    QCOMPARE(*ar2->peak, *shared->catalog_nvlink_GBps);
    QVERIFY(!ar1->peak);
    for (int row = 0; row < model.rowCount(); ++row) {
      const int curve = model.index(row, 0).data(ProfileCurvesModel::kCurveIndexRole).toInt();
      if (&model.curves()[curve] != ar1) continue;
      QVERIFY(!model.index(row, ProfileCurvesModel::kCatalogPeak).data().isValid());
      QVERIFY(!model.index(row, ProfileCurvesModel::kShareOfPeak)
                   .data(ProfileCurvesModel::kRawRole)
                   .isValid());
    }
    model.setProfile(shared);  // a reset with rows
    model.clear();
    QCOMPARE(model.rowCount(), 0);
  }

  void builtinCatalogGpu() {
    // The same measurements said to be of an A100: the peaks come from the built-in catalog.
    const QByteArray text = Edited([](nlohmann::ordered_json* j) {
      (*j)["gpu"] = "A100-SXM4-40GB";
      j->erase("catalog");
    });
    Expected<LoadedProfile> lp =
        ParseProfileText(text, QStringLiteral("a100.json"), TheCatalog().get());
    QVERIFY2(lp.ok(), lp.status().message().c_str());
    QCOMPARE(lp->catalog_source, QStringLiteral("built-in catalog"));
    const GpuSpec& a100 = TheCatalog()->Find("p4d.24xlarge")->gpu;
    const std::vector<ProfileCurve> curves = ProfileCurves(*lp);
    QCOMPARE(curves.front().name, QStringLiteral("fp32"));
    QCOMPARE(*curves.front().peak, *a100.fp32_flops / 1e12);
    QCOMPARE(curves.front().peak_name, QStringLiteral("A100-SXM4-40GB fp32 peak"));
    for (const ProfileCurve& c : curves) {
      if (c.kind == ProfileCurve::kMemory) QCOMPARE(*c.peak, *a100.hbm_GBps);
    }
  }

  void unknownGpuHasNoPeaks() {
    for (const char* gpu : {"Not-A-Catalog-GPU", ""}) {
      const QByteArray text = Edited(gpu[0] ? +[](nlohmann::ordered_json* j) {
        (*j)["gpu"] = "Not-A-Catalog-GPU";
        j->erase("catalog");
      } : +[](nlohmann::ordered_json* j) {
        (*j)["gpu"] = nullptr;
        j->erase("catalog");
      });
      Expected<LoadedProfile> lp =
          ParseProfileText(text, QStringLiteral("x.json"), TheCatalog().get());
      QVERIFY2(lp.ok(), lp.status().message().c_str());
      QVERIFY(!lp->catalog_gpu);
      ProfileCurvesModel model;
      QAbstractItemModelTester tester(&model,
                                      QAbstractItemModelTester::FailureReportingMode::QtTest);
      model.setProfile(std::make_shared<const LoadedProfile>(std::move(*lp)));
      QVERIFY(model.rowCount() > 0);
      for (int row = 0; row < model.rowCount(); ++row) {
        QVERIFY(!model.index(row, ProfileCurvesModel::kCatalogPeak)
                     .data(ProfileCurvesModel::kRawRole)
                     .isValid());
        QVERIFY(model.index(row, ProfileCurvesModel::kMeasured).data().isValid());
      }
    }
  }

  void badFilesGiveTheParsersMessage() {
    Expected<LoadedProfile> syntax =
        ParseProfileText("{\n  \"version\": 1,\n}", QStringLiteral("bad.json"), nullptr);
    QVERIFY(!syntax.ok());
    QCOMPARE(QString::fromStdString(syntax.status().message()),
             QStringLiteral("bad.json:3:1: invalid JSON: expected a string key after ',', got "
                            "'}' (no trailing commas in JSON)"));
    const QByteArray descending =
        Edited([](nlohmann::ordered_json* j) { (*j)["gemm_tables"]["fp32"][1]["flops"] = 1.0; });
    Expected<LoadedProfile> field = ParseProfileText(descending, QStringLiteral("p.json"), nullptr);
    QVERIFY(!field.ok());
    QVERIFY2(
        QString::fromStdString(field.status().message()).startsWith(QStringLiteral("p.json:")) &&
            QString::fromStdString(field.status().message())
                .contains(QStringLiteral("gemm_tables.fp32[1].flops: must be greater than "
                                         "the previous point's")),
        field.status().message().c_str());
    Expected<LoadedProfile> missing =
        LoadProfileFile(QStringLiteral("/nonexistent/p.json"), nullptr);
    QVERIFY(!missing.ok());
    QCOMPARE(QString::fromStdString(missing.status().message()),
             QStringLiteral("cannot read /nonexistent/p.json: No such file or directory"));
  }

  void saveWritesTheFileUnchanged() {
    Expected<LoadedProfile> lp = LoadProfileFile(CpuProfilePath(), TheCatalog().get());
    QVERIFY(lp.ok());
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("copy.json"));
    QVERIFY(SaveProfileText(*lp, path).ok());
    QCOMPARE(ReadFile(path), ReadFile(CpuProfilePath()));
    const Status bad = SaveProfileText(*lp, dir.filePath(QStringLiteral("no/such/dir/p.json")));
    QVERIFY(!bad.ok());
    QVERIFY2(QString::fromStdString(bad.message())
                 .startsWith(dir.filePath(QStringLiteral("no/such/dir/p.json")) +
                             QStringLiteral(": cannot write: ")),
             bad.message().c_str());
  }
};

std::unique_ptr<QObject> MakeProfileModelTest() { return std::make_unique<ProfileModelTest>(); }

}  // namespace trainsim::gui::test

#include "profile_model_test.moc"
